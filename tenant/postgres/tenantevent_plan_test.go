package postgres

import (
	"regexp"
	"strings"
	"testing"
)

// The tenant events' reads stay range reads at any number of companies and
// documents, for any parameter value (a generic plan): the certificates by
// companies_certificate_expiry, the stuck documents by documents_waiting
// (one range per state, merged); no table read whole.
func TestTenantEventQueriesUseIndexes(t *testing.T) {
	checkPlans(t, []planCase{
		{"ok/expiring certificates", "timestamptz, bigint, timestamptz, bigint, bigint", qExpiringCertificates,
			"now(), 0, '0001-01-01', 0, 50", "companies_certificate_expiry"},
		{"ok/stuck documents", stuckTypes, qStuckDocuments, stuckParams, "documents_waiting"},
		{"ok/stuck documents not announced", stuckTypes, qStuckDocumentsUnannounced, stuckParams, "documents_waiting"},
	}, func(t *testing.T, c planCase, plan string) {
		if !strings.Contains(plan, " using "+c.index+" ") {
			t.Errorf("the generic plan does not read %s:\n%s", c.index, plan)
		}
		if c.index == "documents_waiting" && strings.Count(plan, " using documents_waiting ") != 3 {
			t.Errorf("the generic plan does not read a range of documents_waiting per state:\n%s", plan)
		}
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("the generic plan reads a table whole:\n%s", plan)
		}
	})
}

const stuckTypes, stuckParams = "timestamptz, timestamptz, bigint, bigint, bigint", "now(), '0001-01-01', 0, 50, 0"

// Whether a stuck document was announced is one probe of tenant_events'
// key per document (company, event, clave), not a read of every
// announcement. (Bitmap scans are off: on empty tables the planner would
// read the few rows there are at once.)
func TestStuckAnnouncedIsAProbe(t *testing.T) {
	s := openPlanStore(t)
	plan := genericPlan(t, s, "stuck_unannounced", stuckTypes, qStuckDocumentsUnannounced, stuckParams, "enable_bitmapscan")
	probe := regexp.MustCompile(`Index Only Scan using tenant_events_pkey on tenant_events \w+.*\n\s+Index Cond: \(\(company_id = documents(_\d)?\.company_id\) AND \(evento = 'documentos\.detenidos'::text\) AND \(ocasion = documents(_\d)?\.clave\)\)`)
	if n := len(probe.FindAllString(plan, -1)); n != 3 {
		t.Errorf("%d probes of tenant_events_pkey by company, event and clave, want one per state:\n%s", n, plan)
	}
}
