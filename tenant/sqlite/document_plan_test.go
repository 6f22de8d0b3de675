package sqlite

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	msqlite "modernc.org/sqlite"

	"facturad/tenant"
)

// openTempStore opens a store in a fresh temporary folder, closed when
// the test ends.
func openTempStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "facturad.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

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
	s := openTempStore(t)
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

// TestCompanyBranchCompiledOnce: the issuer read is compiled once on a
// connection, whichever ids it is given, 1 among them (see
// qCompanyBranch). An authorizer on the connection sees every compilation.
func TestCompanyBranchCompiledOnce(t *testing.T) {
	ctx := context.Background()
	s := openTempStore(t)
	type pair struct{ company, branch int64 }
	var pairs []pair
	for i := range 3 {
		id, err := s.NextCompanyID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(fmt.Appendf(nil, "token %d", i))
		c := tenant.Company{ID: id, RazonSocial: fmt.Sprintf("Empresa %d", i), NumeroIdentificacion: fmt.Sprintf("3101%06d", id)}
		b := tenant.Branch{Sucursal: "001"}
		u := tenant.APIUser{Username: fmt.Sprintf("u%d", i), TokenHash: h[:], Role: tenant.RoleBranch}
		if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{c.ID, b.ID})
	}
	if pairs[0] != (pair{1, 1}) {
		t.Fatalf("the first company and branch are %v, not 1 and 1", pairs[0])
	}

	conn, err := s.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var compiles atomic.Int64
	count := func(action msqlite.AuthorizerActionCode, _, _, _, _ string) msqlite.AuthorizerReturnCode {
		if action == msqlite.AuthSelect {
			compiles.Add(1)
		}
		return msqlite.AuthorizerOK
	}
	setAuthorizer := func(fn msqlite.AuthorizerFn) {
		t.Helper()
		if err := conn.Raw(func(dc any) error { return dc.(msqlite.AuthorizerRegisterer).RegisterAuthorizer(fn) }); err != nil {
			t.Fatal(err)
		}
	}
	setAuthorizer(count)
	defer setAuthorizer(nil)
	stmt, err := conn.PrepareContext(ctx, qCompanyBranch)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	if compiles.Load() == 0 {
		t.Fatal("the authorizer saw no compilation")
	}
	prepared := compiles.Load()
	for i := range 12 {
		p := pairs[i%len(pairs)]
		c, b := newCompanyRow(), newBranchRow()
		if err := stmt.QueryRowContext(ctx, p.company, p.branch).Scan(append(c.dest, b.dest...)...); err != nil {
			t.Fatalf("company %d, branch %d: %v", p.company, p.branch, err)
		}
	}
	if n := compiles.Load() - prepared; n != 0 {
		t.Errorf("12 reads compiled the statement again %d times", n)
	}
}

// A send reads its issuer by the two primary keys: never a scan.
func TestCompanyBranchPlan(t *testing.T) {
	s := openTempStore(t)
	text := queryPlan(t, s, qCompanyBranch, int64(1), int64(2))
	if strings.Contains(text, "SCAN ") || strings.Count(text, "PRIMARY KEY") != 2 {
		t.Errorf("the issuer is not read by its two keys:\n%s", text)
	}
}
