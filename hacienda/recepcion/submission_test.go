package recepcion_test

import (
	"context"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

func TestNewSubmission(t *testing.T) {
	doc := &hacienda.Document{
		Clave:        "50621112600310112345600100001010000000001100000001",
		FechaEmision: t0,
		Emisor:       hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "02", Numero: issuerNumero}},
	}
	for name, tc := range map[string]struct {
		receptor *hacienda.Party
		want     *recepcion.Party
	}{
		"ok/no receptor":         {nil, nil},
		"ok/receptor without id": {&hacienda.Party{Nombre: "Contado"}, nil},
		"ok/receptor":            {&hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "01", Numero: "112340567"}}, &recepcion.Party{TipoIdentificacion: "01", NumeroIdentificacion: "112340567"}},
		"ok/foreign id too long": {&hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "05", Numero: "12345678901234567"}}, nil},
		"ok/foreign id letters":  {&hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "05", Numero: "AB123456"}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			d := *doc
			d.Receptor = tc.receptor
			s := recepcion.NewSubmission(&d, []byte("<x/>"))
			if s.Clave != d.Clave || !s.Fecha.Equal(t0) || s.Emisor != (recepcion.Party{TipoIdentificacion: "02", NumeroIdentificacion: issuerNumero}) || string(s.SignedXML) != "<x/>" {
				t.Fatalf("%+v", s)
			}
			if (s.Receptor == nil) != (tc.want == nil) || (tc.want != nil && *s.Receptor != *tc.want) {
				t.Fatalf("receptor = %+v, want %+v", s.Receptor, tc.want)
			}
		})
	}
}

// TestNewSubmissionAccepted sends a document built by the engine through
// NewSubmission and gets it accepted.
func TestNewSubmissionAccepted(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	var doc *hacienda.Document
	_, xml := realDoc(t, 40, func(d *hacienda.Document) { doc = d })
	ctx := context.Background()
	if _, err := b.client.Submit(ctx, creds, recepcion.NewSubmission(doc, xml)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, doc.Clave)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("%v %v", st.Estado, err)
	}
}
