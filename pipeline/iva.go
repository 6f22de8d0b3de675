package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"

	"facturad/tenant"
)

// storedBreakdown is the tax breakdown b in the form a reservation stores
// it (tenant.Document.IVABreakdown, tenant.ReceivedDocument.IVABreakdown),
// computed from the document as calculated, or as received, before it is
// numbered: the reservation writes it in the transaction that numbers the
// document, so that keeping it costs no commit of its own, and the
// summary counts it only once the tax authority accepts the document. A
// document resumed later (its call died) is built again from the request
// or answer stored with it, to the same figures, and keeps the breakdown
// written then. Should b not encode (logged at WARN), the document is
// numbered without one: the summary computes it from the stored XML.
func storedBreakdown(ctx context.Context, b tenant.IVABreakdown, log *slog.Logger) []byte {
	raw, err := json.Marshal(b)
	if err != nil {
		log.WarnContext(ctx, "the tax breakdown could not be encoded; the IVA summary will compute it from the XML", "err", err)
		return nil
	}
	return raw
}
