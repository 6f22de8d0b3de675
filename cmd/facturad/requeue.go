package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
)

// requeueStore is what requeue-emails and requeue need of a store (both
// stores have it): the re-queues, the document a clave names (for the
// audit log's company) and the audit log.
type requeueStore interface {
	RequeueFailedEmails(ctx context.Context, since time.Time, companyID int64, at time.Time) (int, error)
	RequeueStopped(ctx context.Context, q tenant.RequeueQuery, now time.Time) (int, error)
	DocumentStateByClave(ctx context.Context, clave string) (tenant.Document, error)
	tenant.AuditStore
	Close() error
}

// runRequeueEmails makes the failed e-mails of accepted documents pending
// again, in bulk: the operator's way back after the mail server, or its
// settings, refused every e-mail for a while (docs/operations.md,
// EmailsFailed). The replicas' mailers send them at their next look; an
// e-mail whose event is over 3 days old gets one attempt.
func runRequeueEmails(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var since string
	var company int64
	c, err := loadConfig("requeue-emails", args, stdout, stderr, getenv, func(fs *commandFlags) {
		fs.StringVar(&since, "since", "", "re-queue the failed e-mails of documents accepted since then: a UTC time such as 2026-11-27T08:00:00Z, or how long back from now, such as 72h")
		fs.Int64Var(&company, "company", 0, "only this company's e-mails (its id); 0 re-queues every company's")
	})
	if err != nil {
		return err
	}
	now := time.Now()
	from, err := parseSince(since, now)
	if err != nil {
		return fmt.Errorf("requeue-emails: %w", err)
	}
	if company < 0 {
		return errors.New("requeue-emails: --company must be a company's id, or 0 for every company")
	}
	store, err := openRequeueStore(ctx, c)
	if err != nil {
		return fmt.Errorf("requeue-emails: %w", err)
	}
	defer store.Close()
	n, err := store.RequeueFailedEmails(ctx, from, company, now)
	if err != nil {
		return fmt.Errorf("requeue-emails: %w", err)
	}
	if n > 0 {
		fields := []string{"since"}
		if company != 0 {
			fields = append(fields, "company")
		}
		recordCommand(ctx, storeAudit{store}, newLogger(stderr, c.LogLevel), "requeue-emails", company, tenant.AuditEmailRequeue, fields...)
	}
	whose := "every company's"
	if company != 0 {
		whose = fmt.Sprintf("company %d's", company)
	}
	fmt.Fprintf(stdout, "re-queued %d failed e-mails (%s, created since %s); a service running with smtp_url sends them at its next look\n",
		n, whose, from.UTC().Format(time.RFC3339))
	return nil
}

// parseSince reads --since: an RFC 3339 time, or a positive duration back
// from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("--since is required: a UTC time such as 2026-11-27T08:00:00Z, or how long back from now, such as 72h")
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--since %s: a duration back from now must be positive", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--since %q is neither a time such as 2026-11-27T08:00:00Z nor a duration such as 72h", s)
	}
	if t.After(now) {
		return time.Time{}, fmt.Errorf("--since %s is in the future", s)
	}
	return t, nil
}

// openRequeueStore opens the service's store without its keys: a
// re-queue touches no sealed value. PostgreSQL's schema is left as it is
// (migrate's work); the embedded store brings its own up to date on
// opening, as a start of the service does. It must exist already, so that
// a mistyped data_dir is not taken for an empty store.
func openRequeueStore(ctx context.Context, c Config) (requeueStore, error) {
	if c.DatabaseURL != "" {
		return postgres.Open(ctx, c.DatabaseURL, postgres.Options{})
	}
	if err := requireEmbeddedStore(c); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, embeddedStorePath(c), sqlite.Options{})
}

// runRequeue makes documents that wait for their company due again: a 05
// stopped on refused tax-authority credentials, a 00 stopped on its
// certificate, a 04 no longer polled. The operator's way to restart them
// once the cause is gone (docs/operations.md, "Re-queue stopped
// documents"); a running service's background worker takes them up at its
// next look (within a second), and one whose cause remains stops again.
func runRequeue(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var (
		clave   string
		company int64
		all     bool
	)
	c, err := loadConfig("requeue", args, stdout, stderr, getenv, func(fs *commandFlags) {
		fs.StringVar(&clave, "clave", "", "re-queue this document (its 50-digit clave)")
		fs.Int64Var(&company, "company", 0, "re-queue every stopped document of this company (its id)")
		fs.BoolVar(&all, "all", false, "re-queue every stopped document of every company")
	})
	if err != nil {
		return err
	}
	chosen := 0
	for _, set := range []bool{clave != "", company != 0, all} {
		if set {
			chosen++
		}
	}
	switch {
	case chosen != 1:
		return errors.New("requeue: give exactly one of --clave, --company or --all")
	case company < 0:
		return errors.New("requeue: --company must be a company's id")
	}
	store, err := openRequeueStore(ctx, c)
	if err != nil {
		return fmt.Errorf("requeue: %w", err)
	}
	defer store.Close()
	n, err := store.RequeueStopped(ctx, tenant.RequeueQuery{CompanyID: company, Clave: clave}, time.Now())
	if err != nil {
		return fmt.Errorf("requeue: %w", err)
	}
	if n > 0 {
		recordRequeue(ctx, store, newLogger(stderr, c.LogLevel), clave, company)
	}
	which := "every company's"
	switch {
	case clave != "":
		which = "document " + clave
	case company != 0:
		which = fmt.Sprintf("company %d's", company)
	}
	fmt.Fprintf(stdout, "re-queued %d stopped documents (%s); the running service's background worker takes them up at its next look\n", n, which)
	if n == 0 && clave != "" {
		fmt.Fprintln(stdout, "nothing to re-queue: the document is settled, already scheduled, or no document has that clave")
	}
	return nil
}

// recordRequeue records a re-queue in the audit log of the company whose
// documents it moved on: the clave's document's, the one --company named,
// or with --all the platform's (company 0).
func recordRequeue(ctx context.Context, store requeueStore, log *slog.Logger, clave string, company int64) {
	field := "all"
	switch {
	case clave != "":
		field = "clave"
		d, err := store.DocumentStateByClave(ctx, clave)
		if err != nil {
			log.Error("audit: the document was re-queued but its company could not be read for the audit log; recorded as the platform's",
				"clave", clave, "err", err)
			break
		}
		company = d.CompanyID
	case company != 0:
		field = "company"
	}
	recordCommand(ctx, storeAudit{store}, log, "requeue", company, tenant.AuditDocumentRequeue, field)
}
