// Package export writes a company's documents of a period as one ZIP
// archive (A.15, GET /api/companies/{CompaniaId}/exportar/v4): for every
// document the company issued and every supplier document it received in
// the period, the signed XML, the tax authority's answer, the company's
// receiver's message (received documents) and the printed PDF, then a CSV
// index of every clave as the archive's last entry.
//
// An export is streamed: documents are read page by page through the
// store's keyset listing and each one whole through the store's full read
// (the path an archive of old documents serves), written to the archive
// and forgotten, so memory stays bounded by the largest document whatever
// the period holds; the two parts that grow with the period, the ZIP's
// central directory and the CSV index, are spooled to temporary files.
// Exports are heavy work, so an Exporter runs a bounded number at a time,
// process-wide and per company, and refuses more (BusyError).
package export

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// Companies decides who may export which company (*tenant.Service
// satisfies it): ListCompany answers the company p may list when it names
// companiaID, ErrNotFound for one it may not see.
type Companies interface {
	ListCompany(ctx context.Context, p tenant.Principal, companiaID int64) (int64, error)
}

// Documents is the store's listing and full read of issued documents
// (tenant.DocumentLister and DocumentByClave of tenant.DocumentStore).
type Documents interface {
	ListDocuments(ctx context.Context, q tenant.ListQuery) ([]tenant.Document, error)
	DocumentByClave(ctx context.Context, clave string) (tenant.Document, error)
}

// Received is the store's listing and full read of received documents
// (tenant.ReceivedStore).
type Received interface {
	ListReceived(ctx context.Context, q tenant.ListQuery) ([]tenant.ReceivedDocument, error)
	ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error)
}

// Defaults of Options (decision 125).
const (
	// DefaultMaxExports is how many exports one process runs at once.
	DefaultMaxExports = 4
	// DefaultMaxPerCompany is how many exports of one company one process
	// runs at once.
	DefaultMaxPerCompany = 1
	// MaxSpan is the longest period one export covers: a year and a day,
	// so that a calendar year or any 12 months fit.
	MaxSpan = 366 * 24 * time.Hour
	// DefaultMaxDuration bounds one export's run.
	DefaultMaxDuration = 2 * time.Hour
	// DefaultPageSize is how many rows one listing page reads.
	DefaultPageSize = 200
	// BusyRetryAfter is the Retry-After of a refusal when every slot is
	// taken; CompanyRetryAfter when the company's are.
	BusyRetryAfter    = 30 * time.Second
	CompanyRetryAfter = 60 * time.Second
)

// Options configure New.
type Options struct {
	Companies Companies
	Documents Documents
	// Received may be nil: a store that keeps no received documents
	// exports issued ones only.
	Received Received
	// MaxExports and MaxPerCompany bound the exports running at once in
	// this process, in all and per company; 0 means the defaults.
	MaxExports, MaxPerCompany int
	// MaxDuration bounds one export's run (DefaultMaxDuration when 0): an
	// export that takes longer ends early (see WriteTo).
	MaxDuration time.Duration
	// PageSize is how many rows one listing page reads (1 to
	// tenant.MaxListLimit; DefaultPageSize when 0).
	PageSize int
	// Renders is the process's bound on PDF renders (*pdf.Limiter): each
	// document's PDF waits for a slot, shared with the downloads and the
	// e-mails. Nil is no bound (tests).
	Renders RenderWaiter
	// Printer makes what each PDF shows beside the XML (the environment's
	// mark, the company's logo and notes), as the PDF routes do.
	Printer printed.Printer
	// TempDir holds the spooled central directory and index while an
	// export runs (os.TempDir when empty); they are unlinked at creation.
	TempDir string
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// RenderWaiter takes a process-wide render slot, waiting for one until
// ctx ends (*pdf.Limiter satisfies it).
type RenderWaiter interface {
	WaitRender(ctx context.Context) (release func(), err error)
}

// Exporter runs exports. Make it with New; it is safe for concurrent use.
type Exporter struct {
	o          Options
	mu         sync.Mutex
	running    int
	perCompany map[int64]int
}

// New checks o and returns an Exporter.
func New(o Options) (*Exporter, error) {
	switch {
	case o.Companies == nil:
		return nil, errors.New("export: Options.Companies is required")
	case o.Documents == nil:
		return nil, errors.New("export: Options.Documents is required")
	case o.PageSize < 0 || o.PageSize > tenant.MaxListLimit:
		return nil, fmt.Errorf("export: PageSize %d is not between 1 and %d", o.PageSize, tenant.MaxListLimit)
	}
	if o.MaxExports <= 0 {
		o.MaxExports = DefaultMaxExports
	}
	if o.MaxPerCompany <= 0 {
		o.MaxPerCompany = DefaultMaxPerCompany
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Exporter{o: o, perCompany: map[int64]int{}}, nil
}

// BusyError refuses an export beyond the bounds: 503 when the process
// runs its most exports, 429 when the company has its own running.
type BusyError struct {
	Status int
	After  time.Duration
}

func (e *BusyError) Error() string { return e.Describe().String() }

// Describe is the refusal for the caller.
func (e *BusyError) Describe() msg.Message {
	if e.Status == 429 {
		return msg.ExportRunning.With()
	}
	return msg.ExportBusy.With()
}

// HTTPStatus is 429 or 503.
func (e *BusyError) HTTPStatus() int { return e.Status }

// RetryAfter is how long to wait before trying again.
func (e *BusyError) RetryAfter() time.Duration { return e.After }

// Shed reports whether the refusal is the process-wide bound (the 503):
// load the service chose not to take, not a failure. The per-company
// bound's 429 is the caller's own and counts as a 4xx anyway.
func (e *BusyError) Shed() bool { return e.Status == 503 }

// Start checks the period (checkPeriod), that p may export company
// companyID (tenant.ErrNotFound when not), and takes an export slot
// (*BusyError when none is free). The Export holds the slot until its
// Release.
func (e *Exporter) Start(ctx context.Context, p tenant.Principal, companyID int64, desde, hasta time.Time) (*Export, error) {
	if err := checkPeriod(desde, hasta); err != nil {
		return nil, err
	}
	if companyID <= 0 {
		return nil, fmt.Errorf("company %d: %w", companyID, tenant.ErrNotFound)
	}
	id, err := e.o.Companies.ListCompany(ctx, p, companyID)
	if err != nil {
		return nil, err
	}
	if err := e.acquire(id); err != nil {
		return nil, err
	}
	return &Export{e: e, companyID: id, desde: desde, hasta: hasta}, nil
}

// checkPeriod is the export's period rule (decision 123), the one place
// it is checked: desde and hasta both required (an export of all time has
// no bound), hasta not before desde and at most MaxSpan after it. A
// failure is a *api.FieldError naming desde or hasta.
func checkPeriod(desde, hasta time.Time) error {
	fields := map[string][]msg.Message{}
	if desde.IsZero() {
		fields[api.ParamDesde] = []msg.Message{msg.DesdeRequired.With()}
	}
	switch {
	case hasta.IsZero():
		fields[api.ParamHasta] = []msg.Message{msg.HastaRequired.With()}
	case desde.IsZero():
	case hasta.Before(desde):
		fields[api.ParamHasta] = []msg.Message{msg.HastaBeforeDesde.With()}
	case hasta.Sub(desde) > MaxSpan:
		fields[api.ParamHasta] = []msg.Message{msg.PeriodTooLong.With()}
	}
	if len(fields) > 0 {
		return &api.FieldError{Fields: fields}
	}
	return nil
}

func (e *Exporter) acquire(company int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.perCompany[company] >= e.o.MaxPerCompany {
		return &BusyError{Status: 429, After: CompanyRetryAfter}
	}
	if e.running >= e.o.MaxExports {
		return &BusyError{Status: 503, After: BusyRetryAfter}
	}
	e.running++
	e.perCompany[company]++
	return nil
}

func (e *Exporter) release(company int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running--
	if e.perCompany[company]--; e.perCompany[company] <= 0 {
		delete(e.perCompany, company)
	}
}

// Running is how many exports hold a slot.
func (e *Exporter) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

// Export is one export that holds a slot: WriteTo writes it, Release
// frees the slot (once; later calls do nothing).
type Export struct {
	e            *Exporter
	companyID    int64
	desde, hasta time.Time
	once         sync.Once
}

// Release frees the export's slot.
func (x *Export) Release() { x.once.Do(func() { x.e.release(x.companyID) }) }

// FileName is the archive's name: facturad-COMPANY-DESDE-HASTA.zip, the
// dates as YYYYMMDD in Costa Rica.
func (x *Export) FileName() string {
	const day = "20060102"
	return fmt.Sprintf("facturad-%d-%s-%s.zip", x.companyID,
		x.desde.In(hacienda.CostaRica).Format(day), x.hasta.In(hacienda.CostaRica).Format(day))
}

// The archive's layout (decision 124).
const (
	dirIssued   = "emitidos/"
	dirReceived = "recibidos/"
	// IndexName is the CSV index, the archive's last entry.
	IndexName = "indice.csv"
	// ErrorName is the entry that ends an export that failed midway.
	ErrorName = "ERROR.txt"
)

// IndexColumns are the CSV index's columns, its first line (decision 124).
var IndexColumns = []string{
	"origen", "tipoDocumento", "clave", "consecutivo", "fechaEmision", "estado",
	"emisorIdentificacion", "emisorNombre", "receptorIdentificacion", "receptorNombre",
	"moneda", "totalImpuesto", "totalComprobante",
	"mensajeReceptor", "consecutivoMensaje",
	"archivoXml", "archivoRespuesta", "archivoMensaje", "archivoPdf", "nota",
}

// Values of the origen column.
const (
	OrigenEmitido  = "emitido"
	OrigenRecibido = "recibido"
)

// WriteTo writes the archive to w: the issued documents, newest first,
// then the received ones, then the index. It returns nil once the archive
// is complete. When it fails midway (a store read fails, the export
// outlives MaxDuration, ctx ends) and w still takes writes, it writes a
// last entry ERROR.txt saying so under an incident code (the cause is
// logged under it), and no central directory: the archive is left
// incomplete, so that no ZIP reader takes it for a whole one. It does not
// Release.
func (x *Export) WriteTo(ctx context.Context, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, x.e.o.MaxDuration)
	defer cancel()
	sw := &stickyWriter{w: w}
	z, err := newZipWriter(sw, x.e.o.TempDir)
	if err != nil {
		return x.fail(ctx, nil, sw, err)
	}
	idx, err := newSpooledEntry(x.e.o.TempDir)
	if err != nil {
		return x.fail(ctx, z, sw, err)
	}
	defer idx.close()
	run := &run{x: x, z: z, csv: csv.NewWriter(idx)}
	run.csv.UseCRLF = true // RFC 4180
	if err := run.csv.Write(IndexColumns); err != nil {
		return x.fail(ctx, z, sw, fmt.Errorf("export: index: %w", err))
	}
	if err := run.all(ctx); err != nil {
		return x.fail(ctx, z, sw, err)
	}
	run.csv.Flush()
	if err := run.csv.Error(); err != nil {
		return x.fail(ctx, z, sw, fmt.Errorf("export: index: %w", err))
	}
	csize, err := idx.finish()
	if err != nil {
		return x.fail(ctx, z, sw, err)
	}
	if err := z.addRaw(IndexName, x.e.o.Now(), zipDeflate, idx.crc, csize, idx.usize, idx.f); err != nil {
		return x.fail(ctx, z, sw, err)
	}
	if err := z.close(); err != nil {
		return x.fail(ctx, nil, sw, err)
	}
	x.e.o.Logger.InfoContext(ctx, "export written", "company", x.companyID,
		"issued", run.issued, "received", run.received, "bytes", z.off)
	return nil
}

// fail ends a failed export: the cause is logged under an incident code
// and, when the stream still takes writes, the archive ends with
// ERROR.txt and no central directory.
func (x *Export) fail(ctx context.Context, z *zipWriter, sw *stickyWriter, cause error) error {
	code := incidentCode()
	reason := "a stored document could not be read"
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		reason = fmt.Sprintf("the export took longer than its limit of %s; export a shorter period", x.e.o.MaxDuration)
	case errors.Is(cause, context.Canceled):
		reason = "the export was stopped (the service is shutting down, or the client went away)"
	case sw.err != nil:
		reason = "the connection to the client failed"
	}
	x.e.o.Logger.ErrorContext(context.WithoutCancel(ctx), "export ended early", "incident", code,
		"company", x.companyID, "err", cause)
	if z != nil {
		if sw.err == nil {
			msg := "La exportación terminó antes de tiempo y está INCOMPLETA; no la use como completa.\r\n" +
				"The export ended early and is INCOMPLETE; do not use it as a whole.\r\n\r\n" +
				"Reason: " + reason + ".\r\nIncident: " + code + "\r\n"
			_ = z.add(ErrorName, x.e.o.Now(), []byte(msg), false)
		}
		z.abandon()
	}
	return fmt.Errorf("export of company %d ended early (incident %s): %w", x.companyID, code, cause)
}

// stickyWriter remembers the first failed write of the stream.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	if err != nil {
		s.err = err
	}
	return n, err
}

func incidentCode() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}
