package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// limitKey is the limiter key of a company's calls to the tax authority.
func limitKey(companyID int64) string { return "hacienda:" + strconv.FormatInt(companyID, 10) }

// credentials opens the company's tax-authority user and password.
func (p *Pipeline) credentials(ctx context.Context, companyID int64) (recepcion.Credentials, error) {
	user, pass, err := p.o.Issuers.HaciendaCredentials(ctx, companyID)
	if err != nil {
		return recepcion.Credentials{}, fmt.Errorf("tax-authority credentials: %w", err)
	}
	return recepcion.Credentials{CompanyID: companyID, Username: user, Password: pass}, nil
}

// credentialsOf opens the tax-authority user and password of a company
// the caller has read already.
func (p *Pipeline) credentialsOf(c tenant.Company) (recepcion.Credentials, error) {
	user, pass, err := p.o.Issuers.HaciendaCredentialsOf(c)
	if err != nil {
		return recepcion.Credentials{}, fmt.Errorf("tax-authority credentials: %w", err)
	}
	return recepcion.Credentials{CompanyID: c.ID, Username: user, Password: pass}, nil
}

// submit hands the stored, signed document to the tax authority, paced by
// the limiter.
func (p *Pipeline) submit(ctx context.Context, d *tenant.Document) error {
	creds, err := p.credentials(ctx, d.CompanyID)
	if err != nil {
		return err
	}
	return p.submitAs(ctx, creds, d)
}

// submitAs is submit with the company's credentials already opened.
func (p *Pipeline) submitAs(ctx context.Context, creds recepcion.Credentials, d *tenant.Document) error {
	start := time.Now()
	err := p.o.Limiter.Wait(ctx, limitKey(d.CompanyID))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return err
	}
	s := recepcion.Submission{
		Clave:     d.Clave,
		Fecha:     d.FechaEmision,
		Emisor:    recepcion.Party{TipoIdentificacion: d.EmisorTipo, NumeroIdentificacion: d.EmisorNumero},
		SignedXML: d.SignedXML,
	}
	s.Receptor = recepcion.APIParty(d.ReceptorTipo, d.ReceptorNumero)
	s.CallbackURL = p.callbackURL(d.Clave)
	start = time.Now()
	_, err = p.o.Submitter.Submit(ctx, creds, s)
	p.metrics.observe(stageSubmit, start)
	return err
}

// markSubmitted records that the tax authority received the document.
func (p *Pipeline) markSubmitted(d *tenant.Document) error {
	now := p.o.Clock()
	if err := move(d, tSubmitted, tenant.StateSent, "", now.Add(p.pollAfter(d, p.o.PollDelay))); err != nil {
		return err
	}
	d.SubmittedAt = now
	d.Attempts = 0
	return nil
}

// askStatus asks the tax authority about the document and records the
// answer in d. known is false when the tax authority does not know the
// clave (d is then unchanged).
func (p *Pipeline) askStatus(ctx context.Context, d *tenant.Document) (known bool, err error) {
	st, known, err := p.statusOf(ctx, d)
	if known {
		p.applyStatus(ctx, d, st)
	}
	return known, err
}

// statusOf asks the tax authority about the document without recording
// the answer. known is false when the tax authority does not know the
// clave.
func (p *Pipeline) statusOf(ctx context.Context, d *tenant.Document) (st recepcion.Status, known bool, err error) {
	return p.statusAs(ctx, d, false)
}

// statusAs is statusOf; insist logs in even when the company's credentials
// were refused a moment ago (a caller is asking: the check call).
func (p *Pipeline) statusAs(ctx context.Context, d *tenant.Document, insist bool) (st recepcion.Status, known bool, err error) {
	creds, err := p.credentials(ctx, d.CompanyID)
	if err != nil {
		return st, false, err
	}
	creds.IgnoreRefusal = insist
	start := time.Now()
	err = p.o.Limiter.Wait(ctx, limitKey(d.CompanyID))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return st, false, err
	}
	start = time.Now()
	st, err = p.o.Submitter.Status(ctx, creds, d.Clave)
	p.metrics.observe(stageStatus, start)
	switch {
	case errors.Is(err, recepcion.ErrNotFound):
		return st, false, nil
	case err != nil:
		return st, false, err
	}
	if err := p.verifyAnswer(ctx, d, &st); err != nil {
		return recepcion.Status{}, false, err
	}
	return st, true, nil
}

// applyStatus records the tax authority's answer: the state from
// ind-estado, and from the MensajeHacienda its code, message, detail lines
// and the answer XML itself.
func (p *Pipeline) applyStatus(ctx context.Context, d *tenant.Document, st recepcion.Status) {
	now := p.o.Clock()
	d.IndEstado = string(st.Estado)
	d.CheckedAt = now
	if d.SubmittedAt.IsZero() {
		// Received through an attempt whose answer was lost.
		d.SubmittedAt = now
	}
	if st.Estado == recepcion.EstadoError {
		// A processing error on the tax authority's side, not a verdict
		// (spec §15.4): see processingError.
		p.processingError(ctx, d, now)
		return
	}
	if m := st.Mensaje; m != nil {
		d.CodigoMensaje = strconv.Itoa(m.Mensaje)
		d.MensajeHacienda = m.EstadoMensaje
		if d.MensajeHacienda == "" {
			switch m.Mensaje {
			case hacienda.MensajeAceptado:
				d.MensajeHacienda = "Aceptado"
			case hacienda.MensajeRechazado:
				d.MensajeHacienda = "Rechazado"
			}
		}
		d.DetalleMensaje = m.DetalleLines()
		if d.DetalleMensaje == nil {
			d.DetalleMensaje = []string{}
		}
		d.ResponseXML = st.ResponseXML
	}
	to := stateOf(st.Estado)
	var next time.Time
	if !settled(to) {
		next = now.Add(p.pollAfter(d, backoff(p.o.PollDelay, p.o.BackoffMax, d.Attempts, 0)))
	}
	p.judge(ctx, d, to, "", next)
}

// judge records the tax authority's word with tJudged, which every state
// may take: a refusal here is a bug, logged.
func (p *Pipeline) judge(ctx context.Context, d *tenant.Document, to tenant.State, reason string, next time.Time) {
	if err := move(d, tJudged, to, reason, next); err != nil {
		p.log.ErrorContext(ctx, "record the tax authority's answer", "err", err)
	}
}

// save stores d under a context of its own: a document's state is written
// whatever became of the call that changed it. The signed XML is written
// once, by saveSigned right after signing; every other save leaves it out
// (the store keeps a part a save does not carry), so that the store is not
// sent the same bytes again, nor compares them with its copy.
func (p *Pipeline) save(ctx context.Context, d *tenant.Document) error {
	return p.saveParts(ctx, d, false)
}

// saveSigned is save for the document just signed: it writes the signed
// XML too.
func (p *Pipeline) saveSigned(ctx context.Context, d *tenant.Document) error {
	return p.saveParts(ctx, d, true)
}

func (p *Pipeline) saveParts(ctx context.Context, d *tenant.Document, signed bool) error {
	ctx, cancel := p.detached(ctx)
	defer cancel()
	if err := p.documentEvent(ctx, d); err != nil {
		return err
	}
	if signed {
		return p.o.Store.SaveDocument(ctx, d)
	}
	xml := d.SignedXML
	d.SignedXML = nil
	err := p.o.Store.SaveDocument(ctx, d)
	d.SignedXML = xml
	return err
}

// processingError records an ind-estado "error": a processing error at the
// tax authority, which may still judge the document (spec §15.4). The
// document stays 04 and is asked about again with backoff; once the tax
// authority still answers "error" ErrorFor after the submission, it ends
// in 03 with a message saying so (a check call may still ask).
func (p *Pipeline) processingError(ctx context.Context, d *tenant.Document, now time.Time) {
	if now.Sub(d.SubmittedAt) >= p.o.ErrorFor {
		p.judge(ctx, d, tenant.StateError, "The tax authority still reports a processing error (ind-estado error) "+
			now.Sub(d.SubmittedAt).Round(time.Minute).String()+" after the document was received; "+
			"it is no longer asked automatically. Check the document to ask again, or contact the tax authority.", time.Time{})
		return
	}
	p.judge(ctx, d, tenant.StateSent, "The tax authority reported a processing error (ind-estado error); it will be asked again.",
		now.Add(backoff(p.o.PollDelay, p.o.BackoffMax, d.Attempts, 0)))
}
