package tenant

import (
	"context"
	"fmt"
	"time"

	"facturad/hacienda/msg"
)

// The archive (A.15, docs/design/archive.md): the settled rows' parts (an
// issued document's signed XML and answer; a received document's supplier
// XML, our message and its answer) are copied to object storage, and the
// store drops its copy some time after. A dropped part reads back empty:
// an archive-aware reader (tenant/archive) fills it from the archive.

// ArchiveKind names the two kinds of archived rows.
type ArchiveKind string

// The kinds, as they appear in the archive's keys and the metrics.
const (
	ArchiveIssued   ArchiveKind = "emitidos"  // documents
	ArchiveReceived ArchiveKind = "recibidos" // received_documents
)

// ArchiveLocation is where the archive wrote a row's objects: the bucket
// and the key its parts are named under (KEY/firmado.xml...). It is
// recorded with the row when archived and read back from there, never
// made again from the service's settings, so that changing
// FACTURAD_ARCHIVE_URL's bucket or prefix leaves the rows archived before
// readable where they are.
type ArchiveLocation struct {
	Bucket, Key string
}

// ArchiveRow is a settled row the archive sweep works on: enough to name
// its objects and read it whole.
type ArchiveRow struct {
	Kind         ArchiveKind
	ID           int64
	CompanyID    int64
	Ambiente     string
	Clave        string
	FechaEmision time.Time
	CreatedAt    time.Time
	ArchivedAt   time.Time // zero until archived
	// Archive is where the row was archived, empty until then.
	Archive ArchiveLocation
	// Failures counts the sweep's failures in a row on the row since it
	// was last archived (DeferArchive).
	Failures int
}

// ArchiveStore keeps where each settled row stands with the archive. Both
// store adapters implement it, and tenant/storetest runs its conformance
// suite over both. A row is settled when its phase is accepted or
// rejected (estado 01, 02); nothing else is archived.
type ArchiveStore interface {
	// UnarchivedRows returns up to limit settled rows of kind that are not
	// archived yet, by id, after the id after, leaving out those deferred
	// (DeferArchive) past now.
	UnarchivedRows(ctx context.Context, kind ArchiveKind, after int64, now time.Time, limit int) ([]ArchiveRow, error)
	// MarkArchived records that row id of kind is archived at loc at at.
	// The caller has written and verified every object first. A row that
	// is not settled is ErrConflict; one archived already keeps its first
	// record. It clears the row's failures (DeferArchive).
	MarkArchived(ctx context.Context, kind ArchiveKind, id int64, loc ArchiveLocation, at time.Time) error
	// DroppableRows returns up to limit rows of kind archived at or before
	// before whose parts the store still keeps, oldest archived first,
	// leaving out those deferred past now.
	DroppableRows(ctx context.Context, kind ArchiveKind, before, now time.Time, limit int) ([]ArchiveRow, error)
	// DeferArchive records a failure of the sweep on row id of kind: it
	// counts one failure more and leaves the row out of UnarchivedRows
	// and DroppableRows until until. A missing row is ErrNotFound.
	DeferArchive(ctx context.Context, kind ArchiveKind, id int64, until time.Time) error
	// DropParts empties row id's parts (the signed XML and the answer; for
	// a received row also the supplier's XML) and records when. Only an
	// archived, settled row's parts are dropped: any other is ErrConflict
	// and keeps them. Dropping twice is ErrConflict too.
	DropParts(ctx context.Context, kind ArchiveKind, id int64, at time.Time) error
}

// Check refuses a kind a store does not know.
func (k ArchiveKind) Check() error {
	if k != ArchiveIssued && k != ArchiveReceived {
		return fmt.Errorf("archive: unknown kind %q", string(k))
	}
	return nil
}

// PartsDropped reports whether a settled document read whole has had its
// parts dropped: a settled document was signed, so its signed XML is
// never empty while the store keeps it.
func (d Document) PartsDropped() bool {
	return (d.Phase == PhaseAccepted || d.Phase == PhaseRejected) && len(d.SignedXML) == 0
}

// PartsDropped reports whether a received document read whole has had its
// parts dropped: the supplier's XML is stored with the row and never
// empty while the store keeps it.
func (r ReceivedDocument) PartsDropped() bool {
	return (r.Phase == PhaseAccepted || r.Phase == PhaseRejected) && len(r.SupplierXML) == 0
}

// archivedPartsKey marks a context whose reads need no dropped part.
type archivedPartsKey struct{}

// WithoutArchivedParts returns ctx marked for reads that need no part the
// store has dropped: an archive-aware reader returns a dropped row as the
// store holds it (its metadata whole, its parts empty) instead of reading
// the archive. The answers that carry no XML (a document's read without
// includeXml or includeResponseXml, a send or its replay without
// includeData, the received documents' reads and sends) use it, so that
// they answer while the archive cannot be read (A.15), and read nothing
// from it that they would not show.
func WithoutArchivedParts(ctx context.Context) context.Context {
	return context.WithValue(ctx, archivedPartsKey{}, true)
}

// ArchivedPartsWanted reports whether reads under ctx need the parts a
// store has dropped (the default), or not (WithoutArchivedParts).
func ArchivedPartsWanted(ctx context.Context) bool {
	skip, _ := ctx.Value(archivedPartsKey{}).(bool)
	return !skip
}

// ArchiveUnavailableError is a read whose parts are only in the archive
// while the archive cannot be read: the gateway answers 503 with
// Retry-After. It carries no detail of the object store (no URL, no
// credentials); the cause is logged by the reader.
type ArchiveUnavailableError struct {
	Clave string
	After time.Duration
}

func (e *ArchiveUnavailableError) Error() string {
	return "the archived copy of document " + e.Clave + " cannot be read now; try again later"
}

// Describe is the refusal for the caller.
func (e *ArchiveUnavailableError) Describe() msg.Message { return msg.ArchiveUnavailable.With(e.Clave) }

// HTTPStatus is 503.
func (e *ArchiveUnavailableError) HTTPStatus() int { return 503 }

// RetryAfter is how long to wait before asking again.
func (e *ArchiveUnavailableError) RetryAfter() time.Duration { return e.After }
