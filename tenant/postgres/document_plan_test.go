package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"facturad/deploy/testenv"
)

// openPlanStore opens a store of one connection on TEST_DATABASE_URL in a
// fresh schema, migrated and dropped when the test ends, for the plan
// checks. (This package's own tests cannot use storetest, which imports
// it.)
func openPlanStore(t *testing.T) *Store {
	t.Helper()
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		if testenv.RequireServices(t) {
			t.Fatal("PostgreSQL (TEST_DATABASE_URL) is required but not configured")
		}
		t.Skip("PostgreSQL (TEST_DATABASE_URL) not configured; skipping")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), url, Options{Schema: "t_" + hex.EncodeToString(b[:]), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DropSchema(context.Background()); err != nil {
			t.Error(err)
		}
		s.Close()
	})
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// genericPlan prepares query as name, with parameters of types, and
// returns the generic plan (for any parameter values) EXPLAIN EXECUTE
// gives for params, with sequential scans turned off, and each of the
// settings in off too (enable_bitmapscan...).
func genericPlan(t *testing.T, s *Store, name, types, query, params string, off ...string) string {
	t.Helper()
	ctx := context.Background()
	stmts := []string{"SET LOCAL plan_cache_mode = force_generic_plan", "SET LOCAL enable_seqscan = off"}
	for _, o := range off {
		stmts = append(stmts, "SET LOCAL "+o+" = off")
	}
	stmts = append(stmts, "PREPARE "+name+" ("+types+") AS "+query)
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, "EXPLAIN EXECUTE "+name+" ("+params+")", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DEALLOCATE "+name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// planCase is a query whose generic plan must read index.
type planCase struct {
	name   string
	types  string
	query  string
	params string
	index  string
}

// checkPlans runs each case as a subtest on a fresh store and hands check
// its generic plan.
func checkPlans(t *testing.T, cases []planCase, check func(t *testing.T, c planCase, plan string)) {
	s := openPlanStore(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, c, genericPlan(t, s, fmt.Sprintf("plan_%d", i), c.types, c.query, c.params))
		})
	}
}

// The hot lookups and the worker's poll must be able to use their partial
// indexes with a generic plan, that is for any parameter value: the
// queries repeat the indexes' conditions for that.
func TestDocumentQueriesUseIndexes(t *testing.T) {
	checkPlans(t, []planCase{
		{"ok/by clave", "text", qDocumentByClave, "'50601'", "documents_clave_key"},
		{"ok/by id externo", "bigint, text", qDocumentByExternalID, "1, 'pedido'", "documents_branch_id_externo_key"},
		{"ok/claim", "timestamptz, timestamptz, bigint", qClaimDueDocuments, "now(), now() + interval '1 minute', 10", "documents_due"},
		{"ok/claim received", "timestamptz, timestamptz, bigint", qClaimDueReceived, "now(), now() + interval '1 minute', 10", "received_due"},
	}, func(t *testing.T, c planCase, plan string) {
		if !strings.Contains(plan, "Index Scan using "+c.index+" ") {
			t.Errorf("the generic plan does not walk %s:\n%s", c.index, plan)
		}
	})
}

// The outbox's maintenance must find its rows by index whatever the size
// of the settled history: the retention's deletes and the bulk e-mail
// re-queue read the settled rows' indexes by creation, a document's
// re-queue its e-mails' index.
func TestDeliveryQueriesUseIndexes(t *testing.T) {
	checkPlans(t, []planCase{
		{"ok/purge webhook deliveries", "timestamptz, bigint", qPurgeHooks, "now(), 100", "webhook_deliveries_settled"},
		{"ok/purge e-mails", "timestamptz, bigint", qPurgeEmails, "now(), 100", "email_deliveries_settled"},
		{"ok/re-queue failed e-mails", "timestamptz, bigint, timestamptz", qRequeueFailedEmails, "now(), 0, now()", "email_deliveries_settled"},
		{"ok/re-queue a document's e-mails", "bigint, timestamptz", qRequeueEmails, "1, now()", "email_deliveries_document"},
	}, func(t *testing.T, c planCase, plan string) {
		if !strings.Contains(plan, " using "+c.index+" ") && !strings.Contains(plan, " on "+c.index+" ") {
			t.Errorf("the generic plan does not read %s:\n%s", c.index, plan)
		}
		// Sequential scans are off, so a table read whole would show
		// as one despite that.
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("the generic plan reads a table whole:\n%s", plan)
		}
	})
}

// The state gauges' query must read documents_waiting and received_waiting
// alone, next_attempt_at included: index-only scans, whatever the size of
// the tables, and no other scan. (Sequential and bitmap scans are turned
// off: on an empty table they would win.)
func TestUnsettledQueryIsIndexOnly(t *testing.T) {
	ctx := context.Background()
	s := openPlanStore(t)
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+qUnsettledDocuments, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	for _, index := range []string{"documents_waiting", "received_waiting"} {
		if !strings.Contains(text, "Index Only Scan using "+index+" ") {
			t.Errorf("the plan does not read %s alone:\n%s", index, text)
		}
	}
	if n := strings.Count(text, " Scan "); n != 2 {
		t.Errorf("the plan has %d scans, want the two index-only ones:\n%s", n, text)
	}
}
