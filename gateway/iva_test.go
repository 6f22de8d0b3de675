package gateway

import (
	"context"
	"strings"
	"testing"

	"facturad/tenant"
)

// incompleteIVA answers every summary with the refusal of a month whose
// documents cannot all be summed.
type incompleteIVA struct{}

func (incompleteIVA) IVASummary(_ context.Context, _ tenant.Principal, _ int64, periodo string) (tenant.IVASummary, error) {
	return tenant.IVASummary{}, &tenant.IVAIncompleteError{Periodo: periodo, Count: 1,
		Claves: []string{"50601042600310112345600100001010000000099100000099"}}
}

// TestIVARouteIncomplete: a month the summary cannot add up whole is a 409
// in the contract's error form naming the documents, as JSON and as CSV,
// never a summary without them nor a 500 that hides them.
func TestIVARouteIncomplete(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: []Route{IVARoute(incompleteIVA{})}})
	for _, q := range []string{"", "&formato=csv"} {
		r := b.do(t, "GET", "/api/companies/2/reportes/iva/v4?periodo=2026-04"+q, &fakeBranch, "", nil)
		requireA7(t, r, 409)
		msg, _ := r.object(t)["message"].(string)
		if !strings.Contains(msg, "50601042600310112345600100001010000000099100000099") || !strings.Contains(msg, "2026-04") {
			t.Errorf("%q: the message does not name the month and the document: %q", q, msg)
		}
	}
}
