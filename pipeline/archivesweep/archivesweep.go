// Package archivesweep copies the settled documents' parts to the archive
// and, once they have been there FACTURAD_ARCHIVE_AFTER, drops the store's
// copy (A.15, docs/design/archive.md).
//
// Every replica runs a Sweeper; one replica sweeps at a time. Each tick a
// replica asks the store for the "archive" lease (tenant.StateStore's
// leases, as pipeline/eventsweep asks for its own "tenant-events" one) for
// the length of one sweep, sweeps
// when it gets it, and gives it back at the end. The lease only saves
// work: a second sweeper on the same rows writes the same bytes under the
// same keys, MarkArchived keeps the first record and DropParts drops once.
//
// An object is written and verified (archive.Client.Ensure) before the row
// is marked archived, and verified again (written again when it differs
// or is missing) just before the store's copy is dropped: an object store
// that fails leaves the row as it is, so a failure delays the drop and
// never loses a document. A row that fails is deferred for a while
// (tenant.ArchiveStore.DeferArchive) so that it never holds the others
// back, and each of a sweep's four steps (archive, then drop, each kind)
// gets its share of the sweep's time.
package archivesweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/pipeline/loop"
	"facturad/tenant"
	"facturad/tenant/archive"
	"facturad/tenant/printed"
)

// Store is what a sweep needs of the store.
type Store interface {
	tenant.ArchiveStore
	DocumentByClave(ctx context.Context, clave string) (tenant.Document, error)
	ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error)
	TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Breakdowns is what a sweep needs of a store that keeps the IVA
// summary's breakdowns (tenant.IVAStore; both adapters are). A Store that
// also implements it has every row's breakdown made sure of before the
// row's XML is dropped: the summary computes a missing breakdown from the
// XML in the store, which a dropped row no longer has.
type Breakdowns interface {
	HasIVABreakdown(ctx context.Context, received bool, id int64) (bool, error)
	SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error
}

// LeaseName is the lease the replicas share the sweep through.
const LeaseName = "archive"

// Defaults of Options.
const (
	DefaultAfter   = 90 * 24 * time.Hour
	MaxTick        = time.Minute
	DefaultTimeout = 5 * time.Minute
	// Batch is how many rows of a kind one step reads at a time.
	Batch = 200
)

// maxFailRun is how many rows in a row may fail before a step gives up
// until the next sweep: an object store that is down fails them all. The
// rows that failed are deferred, so the next sweep starts past them.
const maxFailRun = 3

// Options configure a Sweeper. Store and Client are required.
type Options struct {
	Store  Store
	Client *archive.Client
	// After is how long a row stays in the store once archived (default
	// DefaultAfter). Tick is how often each replica asks for the lease
	// (default min(After, MaxTick)).
	After, Tick time.Duration
	// Timeout bounds one sweep and is the lease's length (default
	// DefaultTimeout).
	Timeout time.Duration
	// Holder names this replica in the lease (default: the host name and
	// a random suffix).
	Holder string
	// Renders is the process's bound on PDF renders (*pdf.Limiter): a
	// row's PDF waits for a slot, shared with the downloads, e-mails and
	// exports. Nil is no bound (tests).
	Renders RenderWaiter
	// Printer makes what a row's PDF shows beside the XML (the
	// environment's mark, the company's logo and notes), as the PDF
	// routes do.
	Printer    printed.Printer
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	Now        func() time.Time
}

// RenderWaiter takes a process-wide render slot, waiting for one until
// ctx ends (*pdf.Limiter satisfies it).
type RenderWaiter interface {
	WaitRender(ctx context.Context) (release func(), err error)
}

// Sweeper runs the sweeps. Build it with New.
type Sweeper struct {
	o    Options
	log  *slog.Logger
	rows *prometheus.CounterVec
	loop loop.Loop
}

// New checks the options and returns a Sweeper.
func New(o Options) (*Sweeper, error) {
	if o.Store == nil || o.Client == nil {
		return nil, errors.New("archivesweep: Options.Store and Client are required")
	}
	if o.After == 0 {
		o.After = DefaultAfter
	}
	if o.After < 0 {
		return nil, fmt.Errorf("archivesweep: After %s is negative", o.After)
	}
	if o.Tick <= 0 {
		o.Tick = min(o.After, MaxTick)
		if o.Tick <= 0 {
			o.Tick = time.Second
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Holder == "" {
		h, err := tenant.NewLeaseHolder()
		if err != nil {
			return nil, fmt.Errorf("archivesweep: %w", err)
		}
		o.Holder = h
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Sweeper{o: o, log: o.Logger.With("component", "archivesweep"), loop: loop.Loop{Name: "archivesweep"}}
	s.rows = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "facturad_archive_rows_total",
		Help: "Settled documents (kind emitidos or recibidos) archived, dropped from the store, or failed (a step tried again at the next sweep).",
	}, []string{"kind", "step"})
	for _, k := range []tenant.ArchiveKind{tenant.ArchiveIssued, tenant.ArchiveReceived} {
		for _, st := range []string{"archived", "dropped", "failed"} {
			s.rows.WithLabelValues(string(k), st)
		}
	}
	if o.Registerer != nil {
		if err := o.Registerer.Register(s.rows); err != nil {
			return nil, fmt.Errorf("archivesweep: metrics: %w", err)
		}
	}
	return s, nil
}

// Result counts one sweep's work. NoPDF counts the rows whose PDF could
// not be drawn, archived (or checked) without it.
type Result struct {
	Archived, Dropped, Failed, NoPDF int
}

// Tick asks for the lease and, when this replica gets it, sweeps: it
// archives the settled rows not archived yet, then drops the store's copy
// of those archived After ago. It reports whether it swept.
func (s *Sweeper) Tick(ctx context.Context) (bool, Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	got, err := s.o.Store.TakeLease(ctx, LeaseName, s.o.Holder, s.o.Timeout)
	if err != nil {
		return false, Result{}, fmt.Errorf("archivesweep: take the lease: %w", err)
	}
	if !got {
		return false, Result{}, nil
	}
	defer func() {
		// Given back so that the next tick, here or elsewhere, may sweep;
		// one left to run out only delays it.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer rcancel()
		if err := s.o.Store.ReleaseLease(rctx, LeaseName, s.o.Holder); err != nil {
			s.log.Warn("archive: give back the lease", "err", err)
		}
	}()
	// Four steps share the sweep: each gets an equal part of what is left
	// of it, so that a long backlog of one kind never starves the other
	// kind or the drops; a step that ends early leaves its time to the
	// next ones. A step whose part runs out stops where it is, and the
	// next sweep goes on from there (what it did is recorded row by row).
	steps := []struct {
		kind tenant.ArchiveKind
		run  func(context.Context, tenant.ArchiveKind, *Result) error
	}{
		{tenant.ArchiveIssued, s.archiveKind}, {tenant.ArchiveReceived, s.archiveKind},
		{tenant.ArchiveIssued, s.dropKind}, {tenant.ArchiveReceived, s.dropKind},
	}
	deadline, _ := ctx.Deadline()
	var res Result
	var errs []error
	for i, st := range steps {
		if ctx.Err() != nil {
			break
		}
		sctx, scancel := context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(steps)-i))
		err := st.run(sctx, st.kind, &res)
		scancel()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if res != (Result{}) {
		s.log.Debug("archive swept", "archived", res.Archived, "dropped", res.Dropped, "failed", res.Failed, "no_pdf", res.NoPDF)
	}
	return true, res, errors.Join(errs...)
}

// MaxBackoff bounds how long a row that keeps failing is passed over.
const MaxBackoff = 24 * time.Hour

// backoff is how long a row is passed over after its failures-th failure
// in a row: Tick, doubled with each failure, at most MaxBackoff.
func (s *Sweeper) backoff(failures int) time.Duration {
	d := s.o.Tick
	for i := 1; i < failures && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// failed records a row's failure: counted, and the row deferred
// (tenant.ArchiveStore.DeferArchive) so that the next sweeps pass over it
// for a while and get on with the others. It reports whether the step
// should go on: not once its time is up.
func (s *Sweeper) failed(ctx context.Context, row tenant.ArchiveRow, res *Result) bool {
	if ctx.Err() != nil {
		return false // the step's time ran out mid-row: not the row's failure
	}
	res.Failed++
	s.rows.WithLabelValues(string(row.Kind), "failed").Inc()
	until := s.o.Now().Add(s.backoff(row.Failures + 1))
	if err := s.o.Store.DeferArchive(ctx, row.Kind, row.ID, until); err != nil {
		s.log.Warn("archive: defer a failed row", "kind", string(row.Kind), "clave", row.Clave, "err", err)
	}
	return true
}

// stepOver tells a step's error from the end of its part of the sweep,
// which is no error.
func stepOver(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// archiveKind archives kind's settled rows not archived yet. A row that
// fails is counted and deferred; after maxFailRun failures in a row (the
// object store down fails them all) the step stops until the next sweep.
func (s *Sweeper) archiveKind(ctx context.Context, kind tenant.ArchiveKind, res *Result) error {
	var after int64
	var fails failRun
	for {
		rows, err := s.o.Store.UnarchivedRows(ctx, kind, after, s.o.Now(), Batch)
		if err != nil {
			return stepOver(ctx, fmt.Errorf("archivesweep: %w", err))
		}
		for _, row := range rows {
			after = row.ID
			if err := s.archiveRow(ctx, row, res); err != nil {
				if !s.failed(ctx, row, res) || fails.add(err) {
					return fails.first
				}
				continue
			}
			fails.n = 0
			res.Archived++
			s.rows.WithLabelValues(string(kind), "archived").Inc()
		}
		if len(rows) < Batch {
			return fails.first
		}
	}
}

// failRun counts a step's failures in a row and keeps the first of them.
type failRun struct {
	n     int
	first error
}

// add counts err and reports whether the step has failed maxFailRun times
// in a row and stops.
func (f *failRun) add(err error) bool {
	f.n++
	if f.first == nil {
		f.first = err
	}
	return f.n >= maxFailRun
}

// parts reads row whole and returns its objects. A PDF that cannot be
// drawn is left out and counted in res (and said so in the log).
func (s *Sweeper) parts(ctx context.Context, row tenant.ArchiveRow, res *Result) ([]archive.Part, error) {
	var draw func() ([]archive.Part, error)
	switch row.Kind {
	case tenant.ArchiveIssued:
		d, err := s.o.Store.DocumentByClave(ctx, row.Clave)
		if err != nil {
			return nil, err
		}
		draw = func() ([]archive.Part, error) { return archive.DocumentParts(ctx, d, s.o.Printer) }
	default:
		r, err := s.o.Store.ReceivedByClave(ctx, row.CompanyID, row.Clave)
		if err != nil {
			return nil, err
		}
		draw = func() ([]archive.Part, error) { return archive.ReceivedParts(r, s.o.Printer) }
	}
	parts, err := s.rendering(ctx, draw)
	if errors.Is(err, archive.ErrNoPDF) {
		res.NoPDF++
		s.log.Warn("archive: the document's PDF cannot be drawn; its XML is archived without it",
			"kind", string(row.Kind), "clave", row.Clave, "err", err)
		return parts, nil
	}
	return parts, err
}

// rendering runs draw, which renders a PDF, holding a render slot; when no
// slot comes the wait's error is returned and draw is not run.
func (s *Sweeper) rendering(ctx context.Context, draw func() ([]archive.Part, error)) ([]archive.Part, error) {
	if s.o.Renders != nil {
		release, err := s.o.Renders.WaitRender(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return draw()
}

func (s *Sweeper) archiveRow(ctx context.Context, row tenant.ArchiveRow, res *Result) error {
	parts, err := s.parts(ctx, row, res)
	if err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	loc := s.o.Client.Location(row)
	if _, err := s.o.Client.Write(ctx, loc, parts); err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	if err := s.o.Store.MarkArchived(ctx, row.Kind, row.ID, loc, s.o.Now()); err != nil {
		return fmt.Errorf("archivesweep: %w", err)
	}
	return nil
}

// dropKind drops the store's copy of kind's rows archived After ago,
// each once its objects are read back equal to it. Failures are handled
// as archiveKind's.
func (s *Sweeper) dropKind(ctx context.Context, kind tenant.ArchiveKind, res *Result) error {
	now := s.o.Now()
	before := now.Add(-s.o.After)
	var fails failRun
	seen := map[int64]bool{}
	for {
		rows, err := s.o.Store.DroppableRows(ctx, kind, before, now, Batch)
		if err != nil {
			return stepOver(ctx, fmt.Errorf("archivesweep: %w", err))
		}
		fresh := 0
		for _, row := range rows {
			if seen[row.ID] {
				continue // failed earlier in this sweep and not deferred
			}
			seen[row.ID], fresh = true, fresh+1
			if err := s.dropRow(ctx, row, res); err != nil {
				if !s.failed(ctx, row, res) || fails.add(err) {
					return fails.first
				}
				continue
			}
			fails.n = 0
			res.Dropped++
			s.rows.WithLabelValues(string(kind), "dropped").Inc()
		}
		if len(rows) < Batch || fresh == 0 {
			return fails.first
		}
	}
}

func (s *Sweeper) dropRow(ctx context.Context, row tenant.ArchiveRow, res *Result) error {
	// The objects are checked against the store's copy right before it is
	// forgotten (and written again should one be missing or differ), where
	// the row was archived, which a change of the URL since does not move.
	parts, err := s.parts(ctx, row, res)
	if err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	if _, err := s.o.Client.Write(ctx, s.o.Client.Located(row.Archive, row), parts); err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	if err := s.keepBreakdown(ctx, row); err != nil {
		return err
	}
	if err := s.o.Store.DropParts(ctx, row.Kind, row.ID, s.o.Now()); err != nil {
		return fmt.Errorf("archivesweep: %w", err)
	}
	return nil
}

// keepBreakdown stores row's IVA breakdown, computed from the XML the
// store still holds as the summary would compute it, when the store keeps
// breakdowns and row has none: once the XML is dropped the summary could
// no longer compute it. A store that fails delays the drop; XML that
// cannot be summed (it does not parse) is logged and dropped all the same,
// as the summary could not sum it from the store either and names it.
func (s *Sweeper) keepBreakdown(ctx context.Context, row tenant.ArchiveRow) error {
	bs, ok := s.o.Store.(Breakdowns)
	if !ok {
		return nil
	}
	received := row.Kind == tenant.ArchiveReceived
	has, err := bs.HasIVABreakdown(ctx, received, row.ID)
	if err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	if has {
		return nil
	}
	var xml, msg []byte
	if received {
		r, err := s.o.Store.ReceivedByClave(ctx, row.CompanyID, row.Clave)
		if err != nil {
			return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
		}
		xml, msg = r.SupplierXML, r.SignedXML
	} else {
		d, err := s.o.Store.DocumentByClave(ctx, row.Clave)
		if err != nil {
			return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
		}
		xml = d.SignedXML
	}
	b, err := tenant.BreakdownFromXML(received, xml, msg)
	if err != nil {
		s.log.Warn("archive: no IVA breakdown can be computed for a row about to be dropped; the IVA summary will name it",
			"kind", string(row.Kind), "clave", row.Clave, "err", err)
		return nil
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	if err := bs.SaveIVABreakdown(ctx, received, row.ID, raw); err != nil {
		return fmt.Errorf("archivesweep: %s %s: %w", row.Kind, row.Clave, err)
	}
	return nil
}

// Start runs a Tick now and every Tick until Stop. Failures are logged
// and the next tick tries again.
func (s *Sweeper) Start(ctx context.Context) error {
	return s.loop.Start(ctx, func(ctx context.Context) {
		sweep := func() {
			if _, _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("archive: sweep incomplete; tried again at the next tick", "err", err)
			}
		}
		sweep()
		loop.Every(ctx, s.o.Tick, sweep)
	})
}

// Stop ends the sweeps, cancelling one in flight, and waits for it or for
// ctx.
func (s *Sweeper) Stop(ctx context.Context) error { return s.loop.Stop(ctx) }
