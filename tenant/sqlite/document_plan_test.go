package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// queryPlan returns the details of the plan SQLite makes for query with
// args (EXPLAIN QUERY PLAN), one line each.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.read.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// The hot lookups and the worker's poll must walk their indexes, not the
// table: a full scan would grow with every document ever issued. The state
// gauges' query reads its two partial indexes alone (covering), one per
// kind of row.
func TestDocumentQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := formatTime(time.Now())
	tests := []struct {
		name     string
		query    string
		args     []any
		index    string
		covering bool
	}{
		{"ok/by clave", qDocumentByClave, []any{"50601"}, "documents_clave", false},
		{"ok/by id externo", qDocumentByExternalID, []any{int64(1), "pedido"}, "documents_branch_id_externo", false},
		{"ok/due", qDueDocuments, []any{now, 10}, "documents_due", false},
		{"ok/due received", qDueReceived, []any{now, 10}, "received_due", false},
		{"ok/unsettled documents", qUnsettledDocuments, nil, "documents_waiting", true},
		{"ok/unsettled received documents' messages", qUnsettledDocuments, nil, "received_waiting", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := queryPlan(t, s, tt.query, tt.args...)
			if !strings.Contains(text, "INDEX "+tt.index+" ") || strings.Contains(text, "TEMP B-TREE") {
				t.Errorf("plan does not walk %s in order:\n%s", tt.index, text)
			}
			if tt.covering && !strings.Contains(text, "COVERING INDEX "+tt.index+" ") {
				t.Errorf("plan reads the table beside %s:\n%s", tt.index, text)
			}
			// Nothing else: a SCAN would read a table or an index whole,
			// growing with every document ever stored.
			if tt.covering && strings.Contains(text, "SCAN ") {
				t.Errorf("plan scans besides its indexes:\n%s", text)
			}
		})
	}
}

// A send reads its issuer by the two primary keys: never a scan.
func TestCompanyBranchPlan(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text := queryPlan(t, s, qCompanyBranch, int64(1), int64(2))
	if strings.Contains(text, "SCAN ") || strings.Count(text, "PRIMARY KEY") != 2 {
		t.Errorf("the issuer is not read by its two keys:\n%s", text)
	}
}
