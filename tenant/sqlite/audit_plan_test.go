package sqlite

import (
	"strings"
	"testing"
)

// A page of a company's audit log walks audit_log_company in the log's
// order, bounded by the company (and on a deep page by the cursor's time):
// never a sort of the company's entries, however many it has.
func TestAuditQueriesUseIndex(t *testing.T) {
	s := openTempStore(t)
	at := "2026-03-01T12:00:00.000000Z"
	tests := []struct {
		name   string
		query  string
		args   []any
		search string
	}{
		{"ok/first page", qAuditLog, []any{7, 51}, "company_id=?"},
		{"ok/deep page", qAuditLogAfter, []any{7, at, at, 99, 51}, "company_id=? AND recorded_at<?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := queryPlan(t, s, tt.query, tt.args...)
			if !strings.Contains(text, "INDEX audit_log_company ("+tt.search) || strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("plan does not walk audit_log_company bounded by %q in order:\n%s", tt.search, text)
			}
		})
	}
}
