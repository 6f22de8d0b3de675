package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// The calls to the tax authority: a submission and a status query, paced
// per company by the limiter, with the company's credentials.

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

// submit hands the stored, signed row to the tax authority with creds,
// paced by the limiter.
func (p *Pipeline) submit(ctx context.Context, creds recepcion.Credentials, w row) error {
	start := time.Now()
	err := p.o.Limiter.Wait(ctx, limitKey(w.companyID()))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = p.submitter(w.ambiente()).Submit(ctx, creds, p.submission(w))
	p.metrics.observe(stageSubmit, start)
	return err
}

// subject is what a status query is about: the key the tax authority knows
// it by, and what its signed answer must name (the clave and the issuer).
type subject struct {
	companyID          int64
	key, clave, issuer string
	ambiente           string // where it was submitted
}

func (w row) subject() subject {
	return subject{companyID: w.companyID(), key: w.key(), clave: w.clave(), issuer: w.issuerNumber(), ambiente: w.ambiente()}
}

// submitter is the client of the tax authority's endpoints of an
// environment: Options.Environments's, or Options.Submitter for one it
// does not list (every one on the sandbox).
func (p *Pipeline) submitter(ambiente string) Submitter {
	if s, ok := p.o.Environments[ambiente]; ok {
		return s
	}
	return p.o.Submitter
}

// askStatus asks the tax authority about the row and records the answer
// in it. known is false when the tax authority does not know the key (w
// is then unchanged).
func (p *Pipeline) askStatus(ctx context.Context, w row) (known bool, err error) {
	st, known, err := p.statusOf(ctx, w.subject(), false)
	if known {
		p.applyStatus(ctx, w, st)
	}
	return known, err
}

// statusOf asks the tax authority about s without recording the answer,
// and verifies the answer (verifyAnswer). known is false when the tax
// authority does not know the key. insist logs in even when the
// company's credentials were refused a moment ago (a caller is asking).
func (p *Pipeline) statusOf(ctx context.Context, s subject, insist bool) (st recepcion.Status, known bool, err error) {
	creds, err := p.credentials(ctx, s.companyID)
	if err != nil {
		return st, false, err
	}
	creds.IgnoreRefusal = insist
	start := time.Now()
	err = p.o.Limiter.Wait(ctx, limitKey(s.companyID))
	p.metrics.observe(stageLimit, start)
	if err != nil {
		return st, false, err
	}
	start = time.Now()
	st, err = p.submitter(s.ambiente).Status(ctx, creds, s.key)
	p.metrics.observe(stageStatus, start)
	switch {
	case errors.Is(err, recepcion.ErrNotFound):
		return st, false, nil
	case err != nil:
		return st, false, err
	}
	if err := p.verifyAnswer(ctx, s, &st); err != nil {
		return recepcion.Status{}, false, err
	}
	return st, true, nil
}
