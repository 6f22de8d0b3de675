package storetest

import (
	"context"
	"testing"

	"facturad/tenant"
)

// testDocumentSequencesMove: ResetSequences sets a company's sequences to
// where its documents of the environment it moves to left them (nothing:
// number 1), and back again; another company's are untouched.
func testDocumentSequencesMove(t *testing.T, s DocumentStore) {
	es, ok := s.(tenant.EnvironmentStore)
	if !ok {
		t.Skip("the store keeps no environments")
	}
	ctx := context.Background()
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	reserve := func(b tenant.Branch, id, ambiente string, want int64) {
		t.Helper()
		d := minimalDocument(b, id, "01", "00001")
		d.Ambiente = ambiente
		mustNot(t, "ReserveDocument "+id, s.ReserveDocument(ctx, &d))
		if d.Numero != want {
			t.Errorf("%s in %s: number %d, want %d", id, ambiente, d.Numero, want)
		}
	}
	for i, id := range []string{"p1", "p2", "p3"} {
		reserve(f.Branch, id, tenant.AmbientePruebas, int64(i+1))
	}
	reserve(other.Branch, "o1", tenant.AmbientePruebas, 1)

	mustNot(t, "ResetSequences to produccion", es.ResetSequences(ctx, f.Company.ID, tenant.AmbienteProduccion))
	reserve(f.Branch, "r1", tenant.AmbienteProduccion, 1)
	reserve(f.Branch, "r2", tenant.AmbienteProduccion, 2)
	reserve(other.Branch, "o2", tenant.AmbientePruebas, 2)

	mustNot(t, "ResetSequences back to pruebas", es.ResetSequences(ctx, f.Company.ID, tenant.AmbientePruebas))
	reserve(f.Branch, "p4", tenant.AmbientePruebas, 4)
}
