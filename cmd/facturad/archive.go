package main

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/pipeline/archivesweep"
	"facturad/tenant"
	"facturad/tenant/archive"
)

// archiveStore is what the archive needs of a store beside the service's
// needs: both adapters are all of it.
type archiveStore interface {
	storeWithDocuments
	tenant.ReceivedStore
	tenant.CredentialStopStore
	tenant.RegistryStore
	tenant.ArchiveStore
}

// archivedReads is the store with its document reads filled from the
// archive: a document or received document whose parts the store dropped
// reads back with them (or fails with *tenant.ArchiveUnavailableError),
// so that every reader of the parts (the routes through the pipeline, the
// e-mails, the exports) gets them alike.
type archivedReads struct {
	archiveStore
	r *archive.Reader
}

func (s archivedReads) DocumentByClave(ctx context.Context, clave string) (tenant.Document, error) {
	d, err := s.archiveStore.DocumentByClave(ctx, clave)
	if err != nil {
		return d, err
	}
	return d, s.r.FillDocument(ctx, &d)
}

func (s archivedReads) DocumentByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.Document, error) {
	d, err := s.archiveStore.DocumentByExternalID(ctx, branchID, idExterno)
	if err != nil {
		return d, err
	}
	return d, s.r.FillDocument(ctx, &d)
}

func (s archivedReads) ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error) {
	r, err := s.archiveStore.ReceivedByClave(ctx, companyID, clave)
	if err != nil {
		return r, err
	}
	return r, s.r.FillReceived(ctx, &r)
}

func (s archivedReads) ReceivedByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.ReceivedDocument, error) {
	r, err := s.archiveStore.ReceivedByExternalID(ctx, branchID, idExterno)
	if err != nil {
		return r, err
	}
	return r, s.r.FillReceived(ctx, &r)
}

// openArchive makes the archive's client and w.reads over it, when
// archive_url is set (w.reads is the store itself otherwise). The object
// store is not required to answer at start: a sweep that cannot reach it
// tries again, and a read of a dropped part answers 503.
func (w *wiring) openArchive(ctx context.Context) error {
	w.reads = w.store
	if w.c.ArchiveURL == "" {
		return nil
	}
	cfg, err := archive.ParseURL(w.c.ArchiveURL)
	if err != nil {
		return fmt.Errorf("%s: %w", w.c.name("archive_url"), err)
	}
	cfg.AccessKey, cfg.SecretKey = w.c.ArchiveAccessKey, w.c.ArchiveSecretKey
	client, err := archive.New(cfg)
	if err != nil {
		return err
	}
	st, ok := w.store.(archiveStore)
	if !ok {
		return fmt.Errorf("%s: the store %T keeps no archive state", w.c.name("archive_url"), w.store)
	}
	reads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facturad_archive_reads_total",
		Help: "Reads of dropped document parts from the archive, by outcome (ok, unavailable).",
	}, []string{"outcome"})
	reads.WithLabelValues("ok")
	reads.WithLabelValues("unavailable")
	if err := w.reg.Register(reads); err != nil {
		return fmt.Errorf("archive metrics: %w", err)
	}
	w.archive = client
	w.reads = archivedReads{archiveStore: st, r: &archive.Reader{C: client, Log: w.log,
		Read: func(outcome string) { reads.WithLabelValues(outcome).Inc() }}}
	if err := client.Check(ctx); err != nil {
		w.log.Warn("archive: the object store does not answer yet; archiving waits for it", "bucket", cfg.Bucket, "err", err)
	}
	w.log.Info("archive of settled documents on", "bucket", cfg.Bucket, "prefix", cfg.Prefix, "endpoint", cfg.Endpoint,
		"after", w.c.ArchiveAfter.String())
	return nil
}

// startArchiveSweep starts the sweep that archives the settled documents
// and drops the store's copies (pipeline/archivesweep), with archive_url.
func (w *wiring) startArchiveSweep(ctx context.Context) error {
	if w.archive == nil {
		return nil
	}
	st := w.store.(archiveStore)
	sw, err := archivesweep.New(archivesweep.Options{Store: st, Client: w.archive, After: w.c.ArchiveAfter,
		Renders: w.renders, Printer: w.print, Registerer: w.reg, Logger: w.log})
	if err != nil {
		return err
	}
	if err := sw.Start(ctx); err != nil {
		return err
	}
	w.stop.add("archive", sw.Stop)
	return nil
}
