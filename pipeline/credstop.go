package pipeline

import (
	"context"
	"time"

	"facturad/tenant"
)

// Documents stopped on their company's credentials (docs/design/pipeline.md,
// "Refused credentials"). A refusal the tax-authority client takes for wrong
// credentials (not for an outage of its token service: recepcion tells them
// apart) leaves the document 05 with no next attempt, and records the
// company's stop in the store (tenant.CredentialStopStore), shared by every
// replica. The background worker probes the credentials with one of the
// company's stopped documents CredentialsProbe after the stop, then at
// doubling intervals up to CredentialsProbeMax; a login that works (that
// probe, a check call, which always logs in, or any status the worker gets
// for a stopped document) makes every stopped document of the company due
// at once, and so does an update of the company's credentials (tenant).

// stopOnCredentials records the company's stop, its first probe
// CredentialsProbe from now. A company stopped already keeps its pace. A
// stop that begins is announced (credenciales.rechazadas) in the same
// transaction, once however many refusals begin it; an event that cannot
// be made (its company unreadable) leaves the stop unannounced rather than
// unrecorded.
func (p *Pipeline) stopOnCredentials(ctx context.Context, companyID int64) {
	if p.o.Stops == nil {
		return
	}
	ctx, cancel := p.detached(ctx)
	defer cancel()
	now := p.o.Clock()
	var ev *tenant.TenantEvent
	if p.o.Notices != nil {
		var err error
		if ev, err = p.o.Notices.CredentialsRefusedEvent(ctx, companyID, now); err != nil {
			p.log.WarnContext(ctx, "announce refused credentials", "company", companyID, "err", err)
			ev = nil
		}
	}
	if err := p.o.Stops.StopOnCredentials(ctx, companyID, now, now.Add(p.o.CredentialsProbe), ev); err != nil {
		p.log.ErrorContext(ctx, "record refused credentials", "company", companyID, "err", err)
		return
	}
	p.metrics.credentials.WithLabelValues("stopped").Inc()
}

// resumeCompany makes the company's stopped documents due now, once a login
// with its credentials worked. A company that is not stopped costs one
// indexed delete.
func (p *Pipeline) resumeCompany(ctx context.Context, companyID int64, why string) {
	if p.o.Stops == nil {
		return
	}
	ctx, cancel := p.detached(ctx)
	defer cancel()
	n, err := p.o.Stops.ResumeCredentialStop(ctx, companyID, p.o.Clock())
	if err != nil {
		p.log.ErrorContext(ctx, "resume documents stopped on credentials", "company", companyID, "err", err)
		return
	}
	if n > 0 {
		p.metrics.credentials.WithLabelValues("resumed").Add(float64(n))
		p.log.InfoContext(ctx, "tax-authority credentials work again; stopped documents resumed", "company", companyID, "documents", n, "by", why)
	}
}

// probeCredentials makes one stopped document due for each company whose
// probe is due; at most every probeEvery, so that an idle worker does not
// ask the store ten times a second.
func (p *Pipeline) probeCredentials(ctx context.Context, force bool) {
	if p.o.Stops == nil {
		return
	}
	now := p.o.Clock()
	last := p.lastProbe.Load()
	if !force && last != 0 && now.Sub(time.Unix(0, last)) < probeEvery {
		return
	}
	p.lastProbe.Store(now.UnixNano())
	companies, err := p.o.Stops.ProbeCredentialStops(ctx, now, p.o.CredentialsProbe, p.o.CredentialsProbeMax, p.claimLimit())
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("background worker: probe refused credentials", "err", err)
		}
		return
	}
	for _, c := range companies {
		p.metrics.credentials.WithLabelValues("probed").Inc()
		p.log.Info("background worker: trying refused tax-authority credentials again with one stopped document", "company", c)
	}
}

// probeEvery is how often the background worker looks for due probes.
const probeEvery = time.Second
