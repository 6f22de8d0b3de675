package recepcion_test

import (
	"context"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

func TestAPIParty(t *testing.T) {
	for name, tc := range map[string]struct {
		tipo, numero string
		want         bool
	}{
		"ok/física":               {"01", "112340567", true},
		"ok/jurídica":             {"02", "3101123456", true},
		"ok/foreign of 12":        {"05", "123456789012", true},
		"out/no identification":   {"", "", false},
		"out/unknown type":        {"07", "112340567", false},
		"out/foreign id too long": {"05", "12345678901234567", false},
		"ok/foreign id letters":   {"05", "AB123456", true},
		"out/foreign of 13":       {"06", "AB12345678901", false},
		"out/punctuation":         {"05", "AB-123456", false},
	} {
		t.Run(name, func(t *testing.T) {
			p := recepcion.APIParty(tc.tipo, tc.numero)
			if (p != nil) != tc.want {
				t.Fatalf("APIParty(%q, %q) = %+v, want present %v", tc.tipo, tc.numero, p, tc.want)
			}
			if p != nil && (p.TipoIdentificacion != tc.tipo || p.NumeroIdentificacion != tc.numero) {
				t.Fatalf("APIParty(%q, %q) = %+v", tc.tipo, tc.numero, p)
			}
		})
	}
}

// TestSubmissionAccepted sends a document built by the engine, with its
// parties as APIParty gives them, and gets it accepted.
func TestSubmissionAccepted(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	var doc *hacienda.Document
	_, xml := realDoc(t, 40, func(d *hacienda.Document) { doc = d })
	s := recepcion.Submission{Clave: doc.Clave, Fecha: doc.FechaEmision, SignedXML: xml,
		Emisor: *recepcion.APIParty(doc.Emisor.Identificacion.Tipo, doc.Emisor.Identificacion.Numero)}
	if r := doc.Receptor; r != nil {
		s.Receptor = recepcion.APIParty(r.Identificacion.Tipo, r.Identificacion.Numero)
	}
	ctx := context.Background()
	if _, err := b.client.Submit(ctx, creds, s); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, doc.Clave)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("%v %v", st.Estado, err)
	}
}
