package main

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// requeueTestStore is a store as the requeue commands find it, for their
// tests: both stores are all of it.
type requeueTestStore interface {
	storetest.DeliveryStore
	storetest.CredentialStopStore
	tenant.AuditStore
}

// requireCommandEntry fails unless the newest entry of company's audit log
// is the command's action with fields, and returns how many entries the
// log holds.
func requireCommandEntry(t *testing.T, s tenant.AuditStore, company int64, command, action string, fields ...string) int {
	t.Helper()
	es, err := s.AuditLog(context.Background(), tenant.AuditQuery{CompanyID: company, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		t.Fatalf("company %d's audit log is empty after %s", company, command)
	}
	e := es[0]
	if e.UserID != 0 || e.Username != "facturad "+command || e.Action != action || e.CompanyID != company ||
		!strings.HasPrefix(e.RequestID, "cli-") || len(e.RequestID) != 20 || !slices.Equal(e.Fields, fields) {
		t.Errorf("company %d's newest entry %+v, want %s by facturad %s with fields %v", company, e, action, command, fields)
	}
	return len(es)
}

// requeueShape is one of the stores the commands work on: open opens it,
// closed when the test ends, with the arguments and environment that
// point a command at it.
type requeueShape struct {
	name string
	open func(t *testing.T) (s requeueTestStore, args []string, environ map[string]string)
}

// requeueStores are the embedded store and PostgreSQL.
func requeueStores(ctx context.Context) []requeueShape {
	return []requeueShape{
		{"embedded", func(t *testing.T) (requeueTestStore, []string, map[string]string) {
			dir := t.TempDir()
			s, err := sqlite.Open(ctx, filepath.Join(dir, "facturad.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, []string{"--data-dir", dir}, nil
		}},
		{"postgres", func(t *testing.T) (requeueTestStore, []string, map[string]string) {
			url := postgresSchema(t)
			s, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, nil, map[string]string{"FACTURAD_DATABASE_URL": url}
		}},
	}
}

// TestRequeueEmailsCommand: on both stores, `facturad requeue-emails`
// makes the failed e-mail of a document accepted since --since pending
// again, and leaves one accepted before it failed; with --company, only
// that company's.
func TestRequeueEmailsCommand(t *testing.T) {
	ctx := context.Background()
	for _, shape := range requeueStores(ctx) {
		t.Run("ok/"+shape.name, func(t *testing.T) {
			s, args, environ := shape.open(t)
			now := time.Now()
			old := storetest.FailedEmail(t, s, now.Add(-5*time.Hour))
			recent := storetest.FailedEmail(t, s, now.Add(-time.Hour))
			// Another company's, before --since 2h but after the 6h of
			// --company below: only the company filter keeps it failed.
			other := storetest.FailedEmail(t, s, now.Add(-3*time.Hour))

			var stdout strings.Builder
			if err := run(ctx, append([]string{"requeue-emails", "--since", "2h"}, args...), &stdout, io.Discard, env(environ)); err != nil {
				t.Fatalf("requeue-emails: %v", err)
			}
			if !strings.HasPrefix(stdout.String(), "re-queued 1 failed e-mails (every company's") {
				t.Errorf("requeue-emails said %q", stdout.String())
			}
			state := func(e tenant.EmailDelivery) tenant.DeliveryState {
				t.Helper()
				es, err := s.DocumentEmails(ctx, e.DocumentID)
				if err != nil || len(es) != 1 {
					t.Fatalf("DocumentEmails: %v, %v", es, err)
				}
				return es[0].State()
			}
			if got := state(recent); got != tenant.DeliveryPending {
				t.Errorf("the e-mail failed an hour ago is %v, want pending", got)
			}
			if got := state(old); got != tenant.DeliveryFailed {
				t.Errorf("the e-mail of five hours ago is %v, want still failed", got)
			}
			// Every company's: the platform's log.
			requireCommandEntry(t, s, 0, "requeue-emails", tenant.AuditEmailRequeue, "since")

			// One company's: the old e-mail's company alone.
			stdout.Reset()
			one := append([]string{"requeue-emails", "--since", now.Add(-6 * time.Hour).UTC().Format(time.RFC3339), "--company", strconv.FormatInt(old.CompanyID, 10)}, args...)
			if err := run(ctx, one, &stdout, io.Discard, env(environ)); err != nil {
				t.Fatalf("requeue-emails --company: %v", err)
			}
			if !strings.HasPrefix(stdout.String(), "re-queued 1 failed e-mails (company ") || state(old) != tenant.DeliveryPending {
				t.Errorf("requeue-emails --company said %q; the old e-mail is %v", stdout.String(), state(old))
			}
			requireCommandEntry(t, s, old.CompanyID, "requeue-emails", tenant.AuditEmailRequeue, "company", "since")
			// Nothing left to re-queue: nothing changed, nothing recorded.
			if err := run(ctx, one, io.Discard, io.Discard, env(environ)); err != nil {
				t.Fatal(err)
			}
			if n := requireCommandEntry(t, s, old.CompanyID, "requeue-emails", tenant.AuditEmailRequeue, "company", "since"); n != 1 {
				t.Errorf("a re-queue that moved nothing was recorded: %d entries", n)
			}
			if other.CompanyID == old.CompanyID {
				t.Fatalf("the two e-mails are of one company, %d", old.CompanyID)
			}
			if got := state(other); got != tenant.DeliveryFailed {
				t.Errorf("another company's e-mail is %v after requeue-emails --company %d, want still failed", got, old.CompanyID)
			}
		})
	}

	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"error/no since", []string{"--data-dir", dir}, "--since is required"},
		{"error/since not a time", []string{"--data-dir", dir, "--since", "yesterday"}, "neither a time"},
		{"error/since in the future", []string{"--data-dir", dir, "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "in the future"},
		{"error/negative duration", []string{"--data-dir", dir, "--since", "-2h"}, "must be positive"},
		{"error/negative company", []string{"--data-dir", dir, "--since", "2h", "--company", "-1"}, "--company"},
		{"error/no store in data_dir", []string{"--data-dir", dir, "--since", "2h"}, "is --data-dir the service's?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(ctx, append([]string{"requeue-emails"}, tt.args...), io.Discard, io.Discard, env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("requeue-emails %v = %v, want an error with %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestRequeueCommand: on both stores, `facturad requeue` makes a stopped
// document due again, by clave or by company, and refuses an ambiguous
// selection.
func TestRequeueCommand(t *testing.T) {
	ctx := context.Background()
	for _, shape := range requeueStores(ctx) {
		t.Run("ok/"+shape.name, func(t *testing.T) {
			s, args, environ := shape.open(t)
			byClave := storetest.StoppedDocument(t, s, "by-clave", tenant.StateNotSentYet)
			byCompany := storetest.StoppedDocument(t, s, "by-company", tenant.StatePending)
			steps := []struct {
				args  []string
				want  string
				doc   tenant.Document
				field string // of the audit entry in the document's company's log
			}{
				{[]string{"--clave", byClave.Clave}, "re-queued 1 stopped documents (document " + byClave.Clave, byClave, "clave"},
				{[]string{"--company", strconv.FormatInt(byCompany.CompanyID, 10)}, "re-queued 1 stopped documents (company", byCompany, "company"},
				{[]string{"--all"}, "re-queued 0 stopped documents (every company's", tenant.Document{}, ""},
			}
			for _, st := range steps {
				var stdout strings.Builder
				if err := run(ctx, append(append([]string{"requeue"}, st.args...), args...), &stdout, io.Discard, env(environ)); err != nil {
					t.Fatalf("requeue %v: %v", st.args, err)
				}
				if !strings.HasPrefix(stdout.String(), st.want) {
					t.Errorf("requeue %v said %q, want %q…", st.args, stdout.String(), st.want)
				}
				if st.doc.Clave == "" {
					// Nothing moved: nothing recorded in the platform's log.
					if es, err := s.AuditLog(ctx, tenant.AuditQuery{CompanyID: 0, Limit: 10}); err != nil || len(es) != 0 {
						t.Errorf("requeue %v recorded %+v, %v", st.args, es, err)
					}
					continue
				}
				requireCommandEntry(t, s, st.doc.CompanyID, "requeue", tenant.AuditDocumentRequeue, st.field)
				d, err := s.DocumentByClave(ctx, st.doc.Clave)
				if err != nil {
					t.Fatal(err)
				}
				if d.NextAttemptAt.IsZero() {
					t.Errorf("requeue %v left %s stopped", st.args, st.doc.IDExterno)
				}
			}
			for _, bad := range [][]string{{}, {"--all", "--company", "1"}, {"--company", "-3"}} {
				if err := run(ctx, append(append([]string{"requeue"}, bad...), args...), io.Discard, io.Discard, env(environ)); err == nil {
					t.Errorf("requeue %v: accepted", bad)
				}
			}
		})
	}
}
