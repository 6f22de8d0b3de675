package sample_test

import (
	"regexp"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
)

var fiftyDigits = regexp.MustCompile(`^[0-9]{50}$`)

func TestDocumentsValid(t *testing.T) {
	docs := sample.Documents(42, 140)
	seen := map[string]bool{}
	for i, d := range docs {
		if len(d.Clave) != 50 || !fiftyDigits.MatchString(d.Clave) {
			t.Errorf("doc %d: clave %q", i, d.Clave)
		}
		if len(d.NumeroConsecutivo) != 20 {
			t.Errorf("doc %d: consecutivo %q", i, d.NumeroConsecutivo)
		}
		seen["type:"+string(d.Type)] = true
		seen["moneda:"+d.ResumenFactura.CodigoTipoMoneda.CodigoMoneda] = true
		for _, m := range d.ResumenFactura.MedioPago {
			seen["pago:"+m.TipoMedioPago] = true
		}
		if len(d.ResumenFactura.MedioPago) > 1 {
			seen["pagos"] = true
		}
		if len(d.OtrosCargos) > 0 {
			seen["otrosCargos"] = true
		}
		if len(d.InformacionReferencia) > 0 {
			seen["referencias"] = true
		}
		if d.ResumenFactura.TotalIVADevuelto.Sign() > 0 {
			seen["ivaDevuelto"] = true
		}
		for _, l := range d.DetalleServicio {
			if len(l.Descuento) > 0 {
				seen["descuento"] = true
			}
			if l.IVACobradoFabrica != "" {
				seen["fabrica:"+l.IVACobradoFabrica] = true
			}
			for _, tx := range l.Impuesto {
				seen["impuesto:"+tx.Codigo] = true
				if tx.CodigoTarifaIVA != "" {
					seen["tarifa:"+tx.CodigoTarifaIVA] = true
				}
				if tx.Exoneracion != nil {
					seen["exoneracion"] = true
				}
			}
		}
		r := d.ResumenFactura
		if r.TotalExonerado.Sign() > 0 {
			seen["exonerado"] = true
		}
		if r.TotalNoSujeto.Sign() > 0 {
			seen["noSujeto"] = true
		}
		if r.TotalExento.Sign() > 0 {
			seen["exento"] = true
		}
		if r.TotalServGravados.Sign() > 0 {
			seen["servicios"] = true
		}
		if r.TotalMercanciasGravadas.Sign() > 0 {
			seen["mercancias"] = true
		}
		if r.TotalImpAsumEmisorFabrica.Sign() > 0 {
			seen["asumido"] = true
		}
	}
	var want []string
	for _, t := range hacienda.DocumentTypes {
		want = append(want, "type:"+string(t))
	}
	for _, c := range []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11"} {
		want = append(want, "tarifa:"+c)
	}
	for _, c := range []string{"01", "02", "03", "04", "05", "06", "07", "99"} {
		want = append(want, "pago:"+c)
	}
	for _, c := range []string{"01", "02", "03", "04", "05", "06", "07", "08", "12", "99"} {
		want = append(want, "impuesto:"+c)
	}
	want = append(want, "moneda:CRC", "moneda:USD", "moneda:EUR", "pagos", "otrosCargos", "referencias", "ivaDevuelto",
		"descuento", "fabrica:01", "fabrica:02", "exoneracion", "exonerado", "noSujeto", "exento", "servicios", "mercancias", "asumido")
	for _, w := range want {
		if !seen[w] {
			t.Errorf("the generated documents never cover %s", w)
		}
	}
}

func TestRequestsFirst40Cover(t *testing.T) {
	docs := sample.Documents(7, 40)
	types := map[hacienda.DocumentType]bool{}
	rates := map[string]bool{}
	for _, d := range docs {
		types[d.Type] = true
		for _, l := range d.DetalleServicio {
			for _, tx := range l.Impuesto {
				rates[tx.CodigoTarifaIVA] = true
			}
		}
	}
	if len(types) != 7 {
		t.Errorf("40 documents cover %d types, want 7", len(types))
	}
	for _, c := range []string{"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11"} {
		if !rates[c] {
			t.Errorf("40 documents never use rate code %s", c)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b := sample.Requests(3, 20), sample.Requests(3, 20)
	for i := range a {
		if a[i].IDExterno != b[i].IDExterno || len(a[i].DetalleServicio) != len(b[i].DetalleServicio) {
			t.Fatalf("request %d differs between two runs with the same seed", i)
		}
	}
}
