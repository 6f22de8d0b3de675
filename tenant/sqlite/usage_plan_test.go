package sqlite

import (
	"strings"
	"testing"
	"time"
)

// A company's month is a range read of documents_company_created (and
// received_company_created), whatever the company's history, for the usage
// calls, the first count of a quota's month and a replay's quota.
func TestUsageQueriesUseIndexes(t *testing.T) {
	s := openTempStore(t)
	from, to := formatTime(time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)), formatTime(time.Date(2026, 4, 1, 6, 0, 0, 0, time.UTC))
	for _, c := range []struct {
		name    string
		query   string
		args    []any
		indexes []string
	}{
		{"ok/usage of a company", qUsageRows(usageByID), []any{from, to, int64(1)}, []string{"documents_company_created", "received_company_created"}},
		{"ok/usage of a reseller's companies", qUsageRows(usageByOwner), []any{from, to, int64(1)}, []string{"documents_company_created", "received_company_created"}},
		{"ok/usage of every company", qUsageRows(usageAll), []any{from, to}, []string{"documents_company_created", "received_company_created"}},
		{"ok/first count of a month", qCountMonth, []any{int64(1), from, to}, []string{"documents_company_created"}},
		{"ok/quota of a replay", qQuotaUse, []any{int64(1), "2026-03", from, to}, []string{"documents_company_created"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := queryPlan(t, s, c.query, c.args...)
			for _, index := range c.indexes {
				if !strings.Contains(plan, "INDEX "+index+" (company_id=? AND created_at>? AND created_at<?)") {
					t.Errorf("the plan does not read a range of %s:\n%s", index, plan)
				}
			}
			for _, table := range []string{"documents", "received_documents"} {
				if strings.Contains(plan, "SCAN "+table+"\n") || strings.HasSuffix(plan, "SCAN "+table) {
					t.Errorf("the plan reads %s whole:\n%s", table, plan)
				}
			}
		})
	}
}
