package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"

	"facturad/tenant"
)

// breakdownKeeper is a store that keeps each document's tax breakdown for
// the IVA summary (A.15); both store adapters are.
type breakdownKeeper interface {
	SaveIVABreakdown(ctx context.Context, received bool, id int64, breakdown []byte) error
}

// keepBreakdown stores the tax breakdown of the row id (a received
// document when received), computed from the document as issued or
// received, before it is signed: the summary counts it only once the tax
// authority accepts it. A store that keeps none, or a write that fails,
// costs nothing but time later: the summary computes a missing breakdown
// from the stored XML (logged here at WARN).
func (p *Pipeline) keepBreakdown(ctx context.Context, received bool, id int64, b tenant.IVABreakdown, log *slog.Logger) {
	var k breakdownKeeper
	if received {
		k, _ = p.o.Received.(breakdownKeeper)
	} else {
		k, _ = p.o.Store.(breakdownKeeper)
	}
	if k == nil {
		return
	}
	raw, err := json.Marshal(b)
	if err == nil {
		ctx, cancel := p.detached(ctx)
		defer cancel()
		err = k.SaveIVABreakdown(ctx, received, id, raw)
	}
	if err != nil {
		log.WarnContext(ctx, "the tax breakdown was not stored; the IVA summary will compute it from the XML", "err", err)
	}
}
