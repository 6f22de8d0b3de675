package hacienda

import (
	"errors"
	"strings"
	"testing"
)

func testMensajes() map[string]*MensajeHacienda {
	return map[string]*MensajeHacienda{
		"accepted": {
			Clave:                    "50621112600310112345600100001010000000005112345678",
			NombreEmisor:             "Comercializadora del Valle Central S.A.",
			TipoIdentificacionEmisor: "02", NumeroCedulaEmisor: "3101123456",
			NombreReceptor:             "María José Rodríguez Solís",
			TipoIdentificacionReceptor: "01", NumeroCedulaReceptor: "109990999",
			Mensaje: MensajeAceptado, EstadoMensaje: "Aceptado",
			DetalleMensaje:     "Este comprobante fue aceptado en el ambiente de pruebas",
			MontoTotalImpuesto: MustAmount("438.9255"),
			TotalFactura:       MustAmount("3815.2755"),
		},
		"rejected without receptor": {
			Clave:                    "50621112600310112345600100001040000000006112345678",
			NombreEmisor:             "Valle & Cía",
			TipoIdentificacionEmisor: "02", NumeroCedulaEmisor: "3101123456",
			Mensaje: MensajeRechazado, EstadoMensaje: "Rechazado",
			DetalleMensaje: "El comprobante electrónico tiene los siguientes errores:\n[\ncodigo, mensaje, fila, columna\n" +
				`-1, "cvc-complex-type.2.4.a: Invalid content was found starting with element 'CodigoComercial'. One of '{Codigo}' is expected.", 2, 1573` +
				"\n]",
			TotalFactura: MustAmount("0"),
		},
	}
}

func TestMensajeHaciendaRoundTrip(t *testing.T) {
	docs := map[string][]byte{}
	for name, m := range testMensajes() {
		b, err := MarshalMensajeHacienda(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs[name] = withPlaceholderSignature(t, b)
		back, err := ParseMensajeHacienda(docs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := *m
		want.Namespace = NamespaceMensajeHacienda
		if back.Clave != want.Clave || back.NombreEmisor != want.NombreEmisor || back.Mensaje != want.Mensaje ||
			back.DetalleMensaje != want.DetalleMensaje || back.NombreReceptor != want.NombreReceptor ||
			back.NumeroCedulaReceptor != want.NumeroCedulaReceptor || back.EstadoMensaje != want.EstadoMensaje ||
			!back.TotalFactura.Equal(want.TotalFactura) || !back.MontoTotalImpuesto.Equal(want.MontoTotalImpuesto) ||
			back.Namespace != want.Namespace {
			t.Errorf("%s: parsed %+v, want %+v", name, back, want)
		}
		again, err := MarshalMensajeHacienda(back)
		if err != nil || string(again) != string(b) {
			t.Errorf("%s: rebuild differs (%v)", name, err)
		}
	}
	requireValid(t, "MensajeHacienda_V4.4.xsd", docs)
}

func TestMensajeHaciendaDetalleLines(t *testing.T) {
	m := testMensajes()["rejected without receptor"]
	lines := m.DetalleLines()
	if len(lines) != 5 || lines[0] != "El comprobante electrónico tiene los siguientes errores:" || !strings.HasPrefix(lines[3], "-1, ") {
		t.Fatalf("DetalleLines = %q", lines)
	}
	if m.Accepted() {
		t.Fatal("a rejection reports Accepted")
	}
}

func TestParseMensajeHacienda(t *testing.T) {
	const clave = "50621112600310112345600100001010000000005112345678"
	old := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<MensajeHacienda xmlns="https://tribunet.hacienda.go.cr/docs/esquemas/2017/v4.2/mensajeHacienda">` + "\n" +
		`  <Clave>` + clave + `</Clave>` + "\n" +
		`  <NombreEmisor>EMPRESA</NombreEmisor><TipoIdentificacionEmisor>02</TipoIdentificacionEmisor>` +
		`<NumeroCedulaEmisor>3101123456</NumeroCedulaEmisor><Mensaje>3</Mensaje><EstadoMensaje>Rechazado</EstadoMensaje>` +
		`<DetalleMensaje>La firma del comprobante electrónico no es válida</DetalleMensaje>` +
		`<MontoTotalImpuesto>0.00000</MontoTotalImpuesto><TotalFactura>1130.00000</TotalFactura>` +
		`<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/></ds:Signature></MensajeHacienda>`
	m, err := ParseMensajeHacienda([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if m.Clave != clave || m.Mensaje != MensajeRechazado || m.Accepted() || m.TotalFactura.String() != "1130" ||
		!strings.Contains(m.Namespace, "v4.2") || m.DetalleLines()[0] != "La firma del comprobante electrónico no es válida" {
		t.Fatalf("parsed %+v", m)
	}

	tests := []struct {
		name, in   string
		notMensaje bool
	}{
		{name: "error/not xml", in: "{}", notMensaje: true},
		{name: "error/other root", in: `<FacturaElectronica><Clave>` + clave + `</Clave></FacturaElectronica>`, notMensaje: true},
		{name: "error/short clave", in: strings.Replace(old, clave, clave[:49], 1)},
		{name: "error/mensaje 2", in: strings.Replace(old, "<Mensaje>3<", "<Mensaje>2<", 1)},
		{name: "error/mensaje text", in: strings.Replace(old, "<Mensaje>3<", "<Mensaje>tres<", 1)},
		{name: "error/bad total", in: strings.Replace(old, "1130.00000", "1.130,00", 1)},
		{name: "error/clave twice", in: strings.Replace(old, "<NombreEmisor>", "<Clave>"+clave+"</Clave><NombreEmisor>", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMensajeHacienda([]byte(tt.in))
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrNotMensajeHacienda); got != tt.notMensaje {
				t.Fatalf("errors.Is(ErrNotMensajeHacienda) = %v for %v", got, err)
			}
		})
	}
}

func TestMarshalMensajeHaciendaErrors(t *testing.T) {
	m := testMensajes()["accepted"]
	m.Mensaje = 2
	if _, err := MarshalMensajeHacienda(m); err == nil {
		t.Fatal("Mensaje 2: no error")
	}
	m = testMensajes()["accepted"]
	m.TotalFactura = Amount{}
	if _, err := MarshalMensajeHacienda(m); err == nil || !strings.Contains(err.Error(), "TotalFactura") {
		t.Fatalf("missing TotalFactura: %v", err)
	}
	if _, err := MarshalMensajeHacienda(nil); err == nil {
		t.Fatal("nil: no error")
	}
}

func FuzzParseMensajeHacienda(f *testing.F) {
	for _, m := range testMensajes() {
		b, err := MarshalMensajeHacienda(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMensajeHacienda(b)
		if err != nil {
			return
		}
		if out, err := MarshalMensajeHacienda(m); err == nil {
			if _, err := ParseMensajeHacienda(out); err != nil {
				t.Fatalf("built answer does not parse: %v\n%s", err, out)
			}
		}
	})
}
