package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/tenant"
)

// TestQuota: a send reports the quota with its document counted; one past
// the quota is a *tenant.QuotaError, counted in quota_refused_total and
// not in refused_total, and takes no number; a replay, at the quota too,
// is answered with what remains now; a company without a quota gets none.
func TestQuota(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open})
			ctx := context.Background()
			in := companyInput(b.company.NumeroIdentificacion, nil)
			two := "2"
			in.CuotaMensual = &two
			if _, err := b.svc.UpdateCompany(ctx, b.admin, b.company.ID, in); err != nil {
				t.Fatal(err)
			}
			periodo := tenant.MonthOf(b.clock.now()).Periodo
			want := func(what string, got *tenant.QuotaUse, used int64) {
				t.Helper()
				if got == nil || *got != (tenant.QuotaUse{Periodo: periodo, Limit: 2, Used: used}) {
					t.Errorf("%s: quota %+v, want %d of 2 used in %s", what, got, used, periodo)
				}
			}
			first := b.mustSend(t, request("01", "cuota-1"))
			want("first", first.Quota, 1)
			want("replay", b.mustSend(t, request("01", "cuota-1")).Quota, 1)
			want("second", b.mustSend(t, request("04", "cuota-2")).Quota, 2)

			_, err := b.send(t, request("01", "cuota-3"))
			var qe *tenant.QuotaError
			if !errors.As(err, &qe) || qe.Limit != 2 || qe.Used != 2 {
				t.Fatalf("beyond the quota: %v", err)
			}
			if _, err := b.store.DocumentByExternalID(ctx, b.branch.BranchID, "cuota-3"); !errors.Is(err, tenant.ErrNotFound) {
				t.Errorf("the refused document was stored: %v", err)
			}
			if n := testutil.ToFloat64(b.p.metrics.quota); n != 1 {
				t.Errorf("quota_refused_total = %v, want 1", n)
			}
			// Every reason exists at 0 from the start: none rose.
			for _, reason := range []string{"in_progress", "stopping", "queue_timeout", "company_full", "lane_full", "all_full"} {
				if n := testutil.ToFloat64(b.p.metrics.refused.WithLabelValues(reason)); n != 0 {
					t.Errorf("refused_total{reason=%q} = %v after a quota refusal, want 0", reason, n)
				}
			}
			if n := testutil.CollectAndCount(b.p.metrics.refused); n != 6 {
				t.Errorf("refused_total has %d series, want the 6 reasons", n)
			}
			want("replay at the quota", b.mustSend(t, request("04", "cuota-2")).Quota, 2)

			// Raised: the refused send took no number.
			three := "3"
			in.CuotaMensual = &three
			if _, err := b.svc.UpdateCompany(ctx, b.admin, b.company.ID, in); err != nil {
				t.Fatal(err)
			}
			third := b.mustSend(t, request("01", "cuota-3"))
			if third.Document.Numero != first.Document.Numero+1 || third.Document.Clave[31:41] != fmt.Sprintf("%010d", first.Document.Numero+1) {
				t.Errorf("the FE after the refusal is number %d (clave %s), want %d", third.Document.Numero, third.Document.Clave, first.Document.Numero+1)
			}

			_, other := b.newCompany(t, "3101999888")
			if out := b.mustSendAs(t, other, request("01", "libre-1")); out.Quota != nil {
				t.Errorf("a company without a quota: %+v", *out.Quota)
			}
		})
	}
}
