package postgres

import (
	"strings"
	"testing"
)

// A page of a company's audit log walks audit_log_company in the log's
// order, from its start or from the cursor's row, whatever the parameter
// values: never a sort of the company's entries, however many it has.
func TestAuditQueriesUseIndex(t *testing.T) {
	s := openPlanStore(t)
	tests := []struct {
		name, types, query, params string
	}{
		{"first_page", "bigint, bigint", qAuditLog, "7, 51"},
		{"deep_page", "bigint, timestamptz, bigint, bigint", qAuditLogAfter, "7, '2026-03-01T12:00:00Z', 99, 51"},
	}
	for _, tt := range tests {
		t.Run("ok/"+tt.name, func(t *testing.T) {
			text := genericPlan(t, s, "audit_"+tt.name, tt.types, tt.query, tt.params, "enable_bitmapscan")
			if !strings.Contains(text, " using audit_log_company ") || strings.Contains(text, "Sort") {
				t.Errorf("the generic plan does not walk audit_log_company in order:\n%s", text)
			}
		})
	}
}
