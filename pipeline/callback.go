package pipeline

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// CallbackPath is the API route the tax authority posts a document's final
// status to (spec §15.5), with the document's clave and its token.
const CallbackPath = "/hacienda/callback/{clave}/{token}"

// ErrBadCallback is a callback whose token does not match its clave, or
// whose clave is not a stored document's: it is answered as not found.
var ErrBadCallback = errors.New("unknown callback")

// callbackToken is the unguessable part of a document's callback URL: a
// MAC of its clave under CallbackKey, so nothing needs storing and a URL
// cannot be made up for another document.
func (p *Pipeline) callbackToken(clave string) string {
	m := hmac.New(sha256.New, p.o.CallbackKey)
	m.Write([]byte("facturad callback v1\x00"))
	m.Write([]byte(clave))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// callbackURL is the callbackUrl sent with a submission, or "" when
// callbacks are off.
func (p *Pipeline) callbackURL(clave string) string {
	if p.o.CallbackBase == "" {
		return ""
	}
	// CallbackPath with its two parameters filled in.
	return strings.TrimRight(p.o.CallbackBase, "/") + "/hacienda/callback/" + clave + "/" + p.callbackToken(clave)
}

// Callback takes the tax authority's callback for a document (spec §15.5)
// with its body. The callback is unauthenticated: a valid token only says
// that the tax authority was given this URL for this clave. The body is
// believed only for what the tax authority signed: a final ind-estado
// with its signed MensajeHacienda, which passes the very checks a status
// answer does (the clave, the issuer, the verdict, a signature chaining to
// AnswerRoots), is applied as it stands, sparing a status call. Without
// AnswerRoots (nothing to tell the tax authority's signature from anyone
// else's), or with any other body, the service asks the tax authority
// itself with the company's own credentials, as a check call would, and
// stores the answer. A wrong token or an unknown clave is ErrBadCallback.
// An error asking the tax authority is returned, so that the callback is
// answered with an error and sent again.
func (p *Pipeline) Callback(ctx context.Context, clave, token string, body []byte) error {
	outcome, err := p.callback(ctx, clave, token, body)
	p.metrics.callback.WithLabelValues(outcome).Inc()
	return err
}

// callback does Callback's work and names its outcome for the metric.
func (p *Pipeline) callback(ctx context.Context, clave, token string, body []byte) (string, error) {
	if err := p.running(); err != nil {
		return "failed", err
	}
	if p.o.CallbackBase == "" {
		return "refused", ErrBadCallback
	}
	if _, err := hacienda.ParseClave(clave); err != nil {
		return "refused", ErrBadCallback
	}
	if !hmac.Equal([]byte(token), []byte(p.callbackToken(clave))) {
		return "refused", ErrBadCallback
	}
	// The callback moves the document's state on (or asks the tax
	// authority about it): its XML is not needed.
	d, err := p.o.Store.DocumentStateByClave(ctx, clave)
	if errors.Is(err, tenant.ErrNotFound) {
		return "refused", ErrBadCallback
	}
	if err != nil {
		return "failed", fmt.Errorf("callback for %s: %w", clave, err)
	}
	if d.Estado.Final() {
		return "settled", nil // nothing to ask
	}
	if applied, err := p.applySigned(ctx, &d, body); applied {
		if err != nil {
			return "failed", fmt.Errorf("callback for %s: %w", clave, err)
		}
		return "applied", nil
	}
	res, err := p.check(ctx, opCallback, docRow(&d))
	if err != nil {
		return "failed", fmt.Errorf("callback for %s: %w", clave, err)
	}
	if res.Failed {
		return "failed", fmt.Errorf("callback for %s: %s", clave, res.Message)
	}
	return "asked", nil
}

// applySigned applies the verdict a callback's body carries when it can be
// believed (see Callback) and reports whether it did; when it did not, the
// caller asks the tax authority. A body that fails the answer's checks is
// counted and logged by verifyAnswer like a forged status answer.
func (p *Pipeline) applySigned(ctx context.Context, d *tenant.Document, body []byte) (bool, error) {
	if p.o.AnswerRoots == nil || len(body) == 0 {
		return false, nil
	}
	st, err := recepcion.DecodeCallback(body)
	if err != nil || !st.Estado.Final() || len(st.ResponseXML) == 0 {
		return false, nil
	}
	w := docRow(d)
	if err := p.verifyAnswer(ctx, w.subject(), &st); err != nil {
		return false, nil
	}
	ctx, cancel := p.workCtx(ctx)
	defer cancel()
	if err := p.record(ctx, w, false, func() { p.applyStatus(ctx, w, st) }); err != nil {
		return true, fmt.Errorf("store the signed verdict: %w", err)
	}
	p.metrics.outcomes.WithLabelValues(opCallback, string(d.Estado)).Inc()
	return true, nil
}
