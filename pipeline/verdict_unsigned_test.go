package pipeline

import (
	"context"
	"sync/atomic"
	"testing"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// verdictFlipper passes the tax authority's statuses on with a final
// ind-estado (the JSON's, which nobody signs) replaced by estado, while on;
// the signed answer is left as the tax authority signed it.
type verdictFlipper struct {
	Submitter
	estado recepcion.Estado
	on     atomic.Bool
}

func (f *verdictFlipper) Status(ctx context.Context, c recepcion.Credentials, key string) (recepcion.Status, error) {
	st, err := f.Submitter.Status(ctx, c, key)
	if err == nil && f.on.Load() && st.Estado.Final() {
		st.Estado = f.estado
	}
	return st, err
}

// TestUnsignedVerdictAgainstTheSignedAnswer: a verdict stands only on the
// tax authority's signed answer. When the status's unsigned ind-estado
// says the opposite of the signed Mensaje, in either direction, nothing is
// applied: the document stays 04 without an answer, the refusal is
// counted under "verdict", and the genuine verdict is applied once a
// status agrees with its answer.
func TestUnsignedVerdictAgainstTheSignedAnswer(t *testing.T) {
	tests := []struct {
		name    string
		faults  sandbox.Faults   // how the sandbox judges (and signs)
		claimed recepcion.Estado // what the unsigned ind-estado says
		genuine tenant.State
	}{
		{"error/aceptado against a signed rechazado", sandbox.Faults{RejectNext: 1}, recepcion.EstadoAceptado, tenant.StateRejected},
		{"error/rechazado against a signed aceptado", sandbox.Faults{}, recepcion.EstadoRechazado, tenant.StateAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			flip := &verdictFlipper{estado: tt.claimed}
			flip.on.Store(true)
			b := setup(t, setupOptions{
				sandbox: sandbox.Options{Faults: tt.faults},
				pipeline: func(o *Options) {
					flip.Submitter = o.Submitter
					o.Submitter = flip
				},
			})
			out := b.mustSend(t, request("01", "verdict-1"))
			clave := out.Document.Clave
			ck, err := b.p.Check(ctx, b.branch, clave)
			if err != nil {
				t.Fatal(err)
			}
			d := b.stored(t, clave)
			if d.Estado != tenant.StateSent || ck.Estado != tenant.StateSent || len(d.ResponseXML) != 0 || d.CodigoMensaje != "" {
				t.Fatalf("ind-estado %s against the signed answer was applied: stored %s codigo %q, check said %s",
					tt.claimed, d.Estado, d.CodigoMensaje, describe(ck))
			}
			if n := answersRefused(t, b, "verdict"); n != 1 {
				t.Fatalf("answers refused for their verdict = %v, want 1", n)
			}

			flip.on.Store(false)
			ck, err = b.p.Check(ctx, b.branch, clave)
			if err != nil {
				t.Fatal(err)
			}
			if d := b.stored(t, clave); ck.Estado != tt.genuine || d.Estado != tt.genuine || len(d.ResponseXML) == 0 {
				t.Fatalf("genuine answer: stored %s with %d bytes of answer, check said %s; want %s",
					d.Estado, len(d.ResponseXML), describe(ck), tt.genuine)
			}
		})
	}
}

// answersRefused reads facturad_pipeline_answers_refused_total{reason}
// from the bundle's registry.
func answersRefused(t *testing.T, b *bundle, reason string) float64 {
	t.Helper()
	mfs, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "facturad_pipeline_answers_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
