package tenant

import (
	"context"
	"time"
)

// ReceivedDocument is a document a supplier issued to a company, as the
// company uploaded it, and the company's answer to it: a receiver's
// message (MensajeReceptor) with its own consecutivo, numbered per branch
// and terminal with type 05, 06 or 07 from the same sequences as the
// documents the company issues, and its state with the tax authority.
type ReceivedDocument struct {
	ID        int64
	CompanyID int64
	BranchID  int64 // the branch whose sequence numbers the message

	// Ambiente is the environment the message was numbered in (see
	// Document.Ambiente).
	Ambiente string

	// IDExterno is the caller's own id, unique per branch; RequestHash is
	// the SHA-256 of the canonical request, to tell a replay from a
	// conflict.
	IDExterno   string
	RequestHash []byte
	// Request is the answer the message was made from: the receive call's
	// request in canonical JSON without the supplier's XML (SupplierXML
	// holds it), set at numbering and never changed, so that the
	// background worker can finish a message whose call died before it
	// was signed.
	Request []byte

	// The supplier's document: its clave (one answer per clave and
	// company), type, parties, issue time, totals (decimals as written)
	// and its signed XML as uploaded.
	Clave                        string
	TipoDocumento                string // 01, 02, 03, 09
	EmisorTipo, EmisorNumero     string
	EmisorNombre                 string
	ReceptorTipo, ReceptorNumero string
	FechaEmision                 time.Time
	TotalImpuesto                string // empty when the document has none
	TotalComprobante             string
	SupplierXML                  []byte
	// FirmaPolitica is the XAdES signature policy the supplier's signature
	// commits to, as its xades:SigPolicyId/Identifier (a resolution's URL,
	// as written); empty for a signature without one (XAdES-BES). Kept so
	// that which policy each supplier signed under can be audited; set at
	// numbering and never changed, as Clave is.
	FirmaPolitica string

	// The receiver's message: Mensaje 1, 2 or 3, its consecutivo (Tipo 05,
	// 06 or 07), its date and, once signed, its XML.
	Mensaje      string
	Tipo         string
	Terminal     string
	Numero       int64
	Consecutivo  string
	FechaMensaje time.Time

	// Submission is the message's state with the tax authority, as for a
	// Document; its SignedXML is the message, once signed.
	Submission

	// IVABreakdown, when set on a received document being reserved, is
	// its tax breakdown for the IVA summary (the supplier's document's,
	// with the creditable tax the message declares), written with it in
	// the same transaction as Document.IVABreakdown is; not read back.
	IVABreakdown []byte

	CreatedAt time.Time
	UpdatedAt time.Time

	// Archive is where the archive keeps the parts (A.15), as for a
	// Document: set by the whole-row reads, empty until archived.
	Archive ArchiveLocation
}

// ReceivedStore keeps received documents and the company's messages about
// them. Both store adapters implement it, and tenant/storetest runs its
// conformance suite over both.
type ReceivedStore interface {
	// ReserveReceived hands out the next number of the sequence of
	// (r.BranchID, r.Terminal, r.Tipo) — the sequences ReserveDocument
	// uses — and inserts r with it in one transaction: it sets r.ID,
	// r.Numero, CreatedAt and UpdatedAt; the caller fills Consecutivo
	// afterwards with SaveReceived. A second answer of the company to the
	// same Clave, or a second (BranchID, IDExterno), is ErrConflict and
	// takes no number. An r.IVABreakdown is written in the same
	// transaction, as ReserveDocument writes a document's; a refused
	// reservation writes none.
	ReserveReceived(ctx context.Context, r *ReceivedDocument) error
	// SaveReceived replaces the mutable fields of r.ID (the consecutivo,
	// the message and its state: every field from Consecutivo on) and sets
	// UpdatedAt, conditional on the phase and version r was read at as
	// SaveDocument is: a row moved or saved by someone else since is
	// ErrConflict and left unchanged, one out of a final phase ErrFinal. A
	// pending r.Event is written to the outbox in the same
	// transaction and cleared, as SaveDocument does.
	SaveReceived(ctx context.Context, r *ReceivedDocument) error
	// ReceivedByClave returns the company's received document with that
	// clave.
	ReceivedByClave(ctx context.Context, companyID int64, clave string) (ReceivedDocument, error)
	// ReceivedByExternalID returns the branch's received document with that
	// id_externo.
	ReceivedByExternalID(ctx context.Context, branchID int64, idExterno string) (ReceivedDocument, error)
	// ClaimDueReceived returns up to limit received documents whose
	// message is in state 00, 04 or 05 with NextAttemptAt set and not
	// after now, most overdue first, and moves their NextAttemptAt to
	// leaseUntil in the same transaction, exactly as ClaimDueDocuments
	// does: two replicas claiming at once never claim the same row. The
	// claim changes nothing else (not UpdatedAt); the worker stores its
	// outcome with SaveReceived.
	ClaimDueReceived(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ReceivedDocument, error)
	// ListReceived returns up to q.Limit of the company's received
	// documents that match q, newest first by the supplier document's
	// issue time (ReceivedDocument.ListKey), then by id, both descending,
	// starting after q.After, as ListDocuments does for issued documents.
	// q.Tipo is the supplier document's type, q.Receptor the supplier's
	// identification (the counterparty), q.Estado the message's state. The
	// rows carry none of the three XMLs.
	ListReceived(ctx context.Context, q ListQuery) ([]ReceivedDocument, error)
}

// ListKey returns r's place in a listing: the supplier document's issue
// time (or, should it have none, the time the row was stored), as for a
// Document.
func (r ReceivedDocument) ListKey() ListKey { return listKey(r.FechaEmision, r.CreatedAt, r.ID) }
