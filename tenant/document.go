package tenant

import (
	"context"
	"strings"
	"time"
)

// Document is an issued document as stored: its numbering, its signed XML
// and what the tax authority said of it. A row exists from the moment its
// number is handed out (see DocumentStore.ReserveDocument), so that a number
// is never silently lost.
type Document struct {
	ID        int64
	CompanyID int64
	BranchID  int64

	// IDExterno is the caller's own id, unique per branch; RequestHash is the
	// SHA-256 of the canonical request, to tell a replay from a conflict.
	IDExterno   string
	RequestHash []byte
	// Request is the request the document was issued from, in the canonical
	// form RequestHash is taken of (set at numbering, never changed), so
	// that the background worker can finish a document whose send call
	// died before storing the signed XML.
	Request []byte

	// Ambiente is the environment the document was numbered in
	// (tenant.AmbientePruebas or AmbienteProduccion): its state is asked
	// of that environment, and each environment numbers apart.
	Ambiente string

	Tipo         string // 01, 02, 03, 04, 08, 09, 10
	Terminal     string // 5 digits
	Numero       int64  // the 10-digit sequence number of the consecutivo
	Consecutivo  string // 20 digits
	Clave        string // 50 digits
	Situacion    string // 1, 2, 3
	FechaEmision time.Time

	// The parties as the reception API wants them (POST /recepcion).
	EmisorTipo, EmisorNumero     string
	ReceptorTipo, ReceptorNumero string // empty when there is no identified receptor

	// Submission is the document's state with the tax authority.
	Submission

	CreatedAt time.Time
	UpdatedAt time.Time

	// SaldoPendiente is what remains to be paid of a document that allows
	// a payment receipt (A.15), as a decimal string in TotalComprobante
	// terms; set by the reads that compute it (the read call, the
	// listing), empty otherwise. It is not stored.
	SaldoPendiente string

	// Claim, when set on a document being reserved, is written with it in
	// the same transaction (see Claim); it is not read back with the
	// document (see ClaimStore).
	Claim *Claim

	// IVABreakdown, when set on a document being reserved, is its tax
	// breakdown for the IVA summary (IVABreakdown's stored form), written
	// with it in the same transaction (see ReserveDocument); it is not read
	// back with the document (IVAStore.IVASources reads it).
	IVABreakdown []byte

	// Quota is what ReserveDocument found of the company's monthly quota
	// (A.14), this document counted: nil when the company has none, and
	// on every document read back (it is not stored).
	Quota *QuotaUse

	// Archive is where the archive keeps the document's parts (A.15), as
	// ArchiveStore.MarkArchived recorded it: set by the whole-row reads
	// (empty in listings and state reads), empty until archived, and
	// never written by SaveDocument.
	Archive ArchiveLocation
}

// PrintedMessage is what the printed representation shows under the state:
// the tax authority's message and its details for a rejected document or
// one in error, nothing otherwise.
func (d Document) PrintedMessage() string {
	if d.Estado != StateRejected && d.Estado != StateError {
		return ""
	}
	return strings.Join(append([]string{d.MensajeHacienda}, d.DetalleMensaje...), "\n")
}

// DocumentStore keeps issued documents. Both store adapters implement it
// beside Store, and tenant/storetest runs its conformance suite over both.
type DocumentStore interface {
	// ReserveDocument hands out the next number of the sequence of (d.BranchID,
	// d.Terminal, d.Tipo) and inserts d with it in one transaction: it sets
	// d.ID, d.Numero, CreatedAt and UpdatedAt. The caller fills Consecutivo
	// and Clave afterwards with SaveDocument. Numbers start at 1, are never
	// reused and never collide across replicas. A second document with the
	// same (BranchID, IDExterno) is ErrConflict and takes no number; so is a
	// duplicate Clave when d.Clave is set (a caller-supplied clave).
	//
	// A caller-supplied clave carries its own number: with d.Clave set,
	// d.Numero must be the clave's number (and Consecutivo its
	// consecutivo). The document keeps it, and the sequence is raised to it
	// (never lowered, not stepped), so that a number handed out later never
	// collides with it. A number or a Consecutivo the branch already holds
	// is ErrConflict: a consecutivo names one document of its branch, which
	// SaveDocument enforces too.
	//
	// A company with a monthly quota (Company.CuotaMensual, read in the
	// same transaction, so that a changed quota applies to the next
	// reservation) has its documents counted per Costa Rica calendar month
	// of CreatedAt, whatever their type or environment: a reservation
	// beyond the quota is a *QuotaError (errors.Is ErrQuota) and takes no
	// number, and the count never lets replicas racing at the limit number
	// one document more. A reservation whose id_externo the branch holds
	// already is ErrConflict, quota reached or not, and counts nothing. A
	// reservation that counts sets d.Quota. A missing company is
	// ErrNotFound.
	//
	// A document carrying a Claim has it written in the same transaction;
	// a claim on another document first locks that document's row, so
	// that claims on one document are reserved one at a time across
	// replicas, and calls Claim.Check with the live claims on it: its
	// error refuses the reservation, which takes no number and counts
	// nothing. A missing referenced document is ErrNotFound.
	//
	// A document carrying an IVABreakdown has it written in the same
	// transaction (IVAStore), so that keeping it costs no commit of its
	// own; a reservation refused for any reason writes none.
	ReserveDocument(ctx context.Context, d *Document) error
	// SaveDocument replaces the mutable fields of the document d.ID (every
	// field but ID, CompanyID, BranchID, Ambiente, IDExterno, RequestHash,
	// Request, Tipo, Terminal, Numero and CreatedAt) and sets UpdatedAt. A Clave
	// taken by another document is ErrConflict.
	//
	// The large parts are kept apart from the fields every save writes: a
	// SignedXML or ResponseXML that d carries replaces the stored one (and
	// is written only when it differs), one that d leaves empty keeps what
	// is stored. Nothing the service does empties them once set.
	//
	// The save is conditional on the phase and the version the document
	// was read (or last saved) at: it applies only while the stored phase
	// is still d.From and the stored UpdatedAt still d.UpdatedAt. A
	// document moved or saved by someone else since is ErrConflict and
	// left unchanged, so that two workers holding the same document never
	// overwrite each other's result: the loser reads it again and decides
	// anew, or drops its result. A save that would move a document out of
	// a final phase (01, 02) is refused (ErrFinal), as is one whose phase
	// and estado disagree (Submission.CheckSave). Each save sets d.From to
	// the phase stored and moves UpdatedAt forward, at least by a
	// microsecond, even when the clock does not.
	//
	// A pending d.Event is written to the outbox in the same transaction
	// (a delivery per webhook of the company that asked for it, and an
	// e-mail when it lists addresses), and d.Event is cleared; a save that
	// fails writes nothing.
	SaveDocument(ctx context.Context, d *Document) error
	// DocumentByClave returns the document with that clave.
	DocumentByClave(ctx context.Context, clave string) (Document, error)
	// DocumentStateByClave is DocumentByClave without the large parts
	// (Request, SignedXML and ResponseXML read back empty), for a caller
	// that reads a document to move its state on: it reads a few hundred
	// bytes instead of the XML, and saving what it read keeps the parts.
	DocumentStateByClave(ctx context.Context, clave string) (Document, error)
	// DocumentByExternalID returns the branch's document with that id_externo.
	DocumentByExternalID(ctx context.Context, branchID int64, idExterno string) (Document, error)
	// ClaimDueDocuments returns up to limit documents in state 00, 04 or 05 whose
	// NextAttemptAt is set and not after now, oldest first, and moves their
	// NextAttemptAt to leaseUntil in the same transaction, so that two
	// replicas polling at once never claim the same document.
	ClaimDueDocuments(ctx context.Context, now, leaseUntil time.Time, limit int) ([]Document, error)
}
