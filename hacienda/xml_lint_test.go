package hacienda

import (
	"bytes"
	"testing"

	"facturad/hacienda/xmlcheck"
)

// The batch XSD helpers are xmlcheck's; these names keep the package's
// many schema tests short.

// xsdDir holds the official v4.4 schemas, copied unchanged (see its README).
var xsdDir = xmlcheck.SchemaDir()

func xmllint(t testing.TB) string { return xmlcheck.Tool(t, "xmllint") }

func withPlaceholderSignature(t testing.TB, doc []byte) []byte {
	return xmlcheck.WithPlaceholderSignature(t, doc)
}

func validateXSD(t testing.TB, xsdName string, docs map[string][]byte) []xmlcheck.Result {
	return xmlcheck.Batch(t, xsdName, docs)
}

func requireValid(t testing.TB, xsdName string, docs map[string][]byte) {
	t.Helper()
	xmlcheck.RequireValid(t, xsdName, docs)
}

func TestXSDHelperCatchesErrors(t *testing.T) {
	// A minimal answer message is valid once it carries a signature; copies
	// without it, with two elements swapped or with an exponent must be refused.
	good := []byte(`<?xml version="1.0" encoding="utf-8"?>` +
		`<MensajeHacienda xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda">` +
		`<Clave>50615092500310112345600100001010000000123112345678</Clave>` +
		`<NombreEmisor>EMPRESA DE EJEMPLO</NombreEmisor><TipoIdentificacionEmisor>02</TipoIdentificacionEmisor>` +
		`<NumeroCedulaEmisor>3101123456</NumeroCedulaEmisor><Mensaje>1</Mensaje><EstadoMensaje>Aceptado</EstadoMensaje>` +
		`<DetalleMensaje>ok</DetalleMensaje><TotalFactura>100</TotalFactura></MensajeHacienda>`)
	swapped := bytes.Replace(good,
		[]byte(`<Mensaje>1</Mensaje><EstadoMensaje>Aceptado</EstadoMensaje>`),
		[]byte(`<EstadoMensaje>Aceptado</EstadoMensaje><Mensaje>1</Mensaje>`), 1)
	res := validateXSD(t, "MensajeHacienda_V4.4.xsd", map[string][]byte{
		"good":        withPlaceholderSignature(t, good),
		"swapped":     withPlaceholderSignature(t, swapped),
		"unsigned":    good,
		"bad amounts": withPlaceholderSignature(t, bytes.Replace(good, []byte(">100<"), []byte(">1e2<"), 1)),
	})
	for _, r := range res {
		if want := r.Name == "good"; r.Valid != want {
			t.Errorf("%s: valid = %v, want %v (%s)", r.Name, r.Valid, want, r.Output)
		}
	}
}
