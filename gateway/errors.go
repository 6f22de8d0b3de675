package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// apiError is an answer the gateway decided on itself: a status, the
// answer's message (an answer entry of the catalogue, whose code is the
// body's code) and, for a 400, the offending fields with theirs. Every
// message is rendered in the caller's language when the answer is written.
type apiError struct {
	status int
	msg    msg.Message
	// raw is the message of an error that has none in the catalogue, said
	// as it is in every language (ObserveErrorAnswers reports it).
	raw    string
	fields map[string][]msg.Message
	// rawFields are field messages from outside the catalogue, said as
	// they are.
	rawFields  map[string][]string
	retryAfter time.Duration
	header     map[string]string // further headers of the answer
	// shed marks a 503 the service chose because of load or a rollout
	// (see shedder): counted as status="shed".
	shed bool
}

func (e *apiError) Error() string {
	if e.raw != "" {
		return e.raw
	}
	return e.msg.String()
}

var errTooLarge = &apiError{status: fasthttp.StatusRequestEntityTooLarge, msg: msg.BodyTooLarge.With()}

// invalid is a 400 on one field.
func invalid(field string, m msg.Message) *apiError {
	return invalidFields(msg.One(field, m))
}

// invalidFields is a 400 on the fields.
func invalidFields(fields map[string][]msg.Message) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, msg: msg.ValidationFailed.With(), fields: fields}
}

// fieldMessager is an error that names the request fields at fault with
// messages of the catalogue (the body decoders' *api.FieldError, the
// document's, the tenant service's and the pipeline's validation errors).
type fieldMessager interface {
	FieldMessages() map[string][]msg.Message
}

// fieldErrorer is an error that names the request fields at fault with
// messages of its own, outside the catalogue: they are answered as they
// are, in every language.
type fieldErrorer interface {
	FieldErrors() map[string][]string
}

// statusError is an error that carries its own status; only 429 (rate
// limited) and 503 (overloaded or draining) are honoured, for the document
// routes' queues and limiters.
type statusError interface {
	HTTPStatus() int
}

// retryAfterError tells how long the caller should wait before retrying.
type retryAfterError interface {
	RetryAfter() time.Duration
}

// shedder is a refusal the service chose because of load or a rollout (a
// branch's lane full, the same id_externo in flight, the pipeline
// stopping, a process-wide bound on heavy work) rather than a failure. Its
// 503 is counted in facturad_http_requests_total as status="shed", not
// "5xx": the error-ratio alerts read "5xx" only. A 503 from a failing
// dependency (the store, the archive, the tax authority) is not shed.
type shedder interface {
	Shed() bool
}

// fail maps err to the answer: one switch for every call.
func (c *call) fail(err error) {
	var (
		ae *apiError
		ce *credentialsError
		fm fieldMessager
		fe fieldErrorer
		se statusError
		qe *tenant.QuotaError
		un *tenant.ArchiveUnavailableError
		ie *tenant.IVAIncompleteError
	)
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &qe):
		ae = quotaRefusal(qe.QuotaUse)
	case errors.As(err, &un):
		// Only the archive holds the parts and it cannot be read now:
		// the metadata still answers elsewhere (A.15).
		ae = &apiError{status: fasthttp.StatusServiceUnavailable, retryAfter: un.RetryAfter(), msg: un.Describe()}
	case errors.As(err, &ie):
		// The stored documents cannot make a whole month: named, not
		// hidden behind an incident code (decision 112).
		ae = &apiError{status: ie.HTTPStatus(), msg: ie.Describe()}
	case errors.As(err, &ce):
		ae = &apiError{status: fasthttp.StatusUnauthorized, msg: msg.Unauthenticated.With(ce.reason.With())}
	case errors.As(err, &fm):
		ae = invalidFields(fm.FieldMessages())
	case errors.As(err, &fe):
		ae = &apiError{status: fasthttp.StatusBadRequest, msg: msg.ValidationFailed.With(), rawFields: fe.FieldErrors()}
	case errors.Is(err, tenant.ErrUnauthenticated):
		ae = &apiError{status: fasthttp.StatusUnauthorized, msg: msg.Unauthenticated.With("")}
	case errors.Is(err, tenant.ErrNotFound):
		ae = &apiError{status: fasthttp.StatusNotFound, msg: c.rt.notFound(c.rc)}
	case errors.Is(err, tenant.ErrConflict):
		field, m := c.conflictField, c.conflictMsg
		if field == "" {
			field, m = "id", msg.ConflictRecord
		}
		ae = invalid(field, m.With())
	case errors.As(err, &se) && (se.HTTPStatus() == fasthttp.StatusTooManyRequests || se.HTTPStatus() == fasthttp.StatusServiceUnavailable):
		ae = &apiError{status: se.HTTPStatus()}
		if m, ok := msg.Of(err); ok && m.Entry().Kind() == msg.Answer {
			ae.msg = m
		} else {
			ae.msg, ae.raw = msg.Unavailable.With(), err.Error()
			if ae.status == fasthttp.StatusTooManyRequests {
				ae.msg = msg.TooManyRequests.With()
			}
		}
		var ra retryAfterError
		if errors.As(err, &ra) {
			ae.retryAfter = ra.RetryAfter()
		}
		var sh shedder
		ae.shed = errors.As(err, &sh) && sh.Shed()
	case errors.Is(err, tenant.ErrOutcomeUnknown):
		// Before the deadline's case: a COMMIT whose deadline ran out
		// on its way may have been made (decision 135).
		c.outcomeUnknown(err)
		return
	case errors.Is(err, tenant.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		c.unavailable(err)
		return
	default:
		c.severe(err)
		return
	}
	if ae.status == fasthttp.StatusUnauthorized {
		c.rc.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Basic realm="facturad"`)
	}
	c.shed = ae.shed && ae.status == fasthttp.StatusServiceUnavailable
	writeAPIError(c.rc, c.rt, ae)
}

// unavailable answers a failure that is expected to pass (a
// *tenant.UnavailableError: the store unreachable or timing out, the auth
// cache unreachable where nothing stands in for it; or the call's own
// deadline run out waiting) with 503 and Retry-After in the A.7 form, on
// every route: A.6's own bodies are for its 500s, and a client that
// retries reads the A.7 form of a 503 (decision 135). It is a failure, so
// it counts as "5xx", but the log line is sampled per route: an outage
// would otherwise write one ERROR line per request.
func (c *call) unavailable(err error) {
	after := tenant.UnavailableRetryAfter
	var ue *tenant.UnavailableError
	if errors.As(err, &ue) {
		after = ue.RetryAfter()
	}
	if n, ok := c.rt.unavailableLog.take(time.Now()); ok {
		c.s.log.Error("request failed: store unavailable; answered 503",
			"request_id", c.reqID,
			"method", c.rt.method,
			"route", c.rt.pattern,
			"user", c.p.Username,
			"err", err,
			"retry_after_s", int(after/time.Second),
			"not_logged", n,
		)
	}
	c.rc.Response.ResetBody()
	writeAPIError(c.rc, c.rt, &apiError{status: fasthttp.StatusServiceUnavailable, retryAfter: after, msg: msg.StoreUnavailable.With()})
}

// logSampler lets one log line through per interval and counts the ones
// it held back since, for a failure that repeats on every request.
type logSampler struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// unavailableLogEvery is how often a route logs its unavailable answers.
const unavailableLogEvery = 10 * time.Second

// take reports whether a line may be written at now, with how many were
// held back since the last one.
func (s *logSampler) take(now time.Time) (held int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() && now.Sub(s.last) < unavailableLogEvery {
		s.suppressed++
		return 0, false
	}
	held, s.last, s.suppressed = s.suppressed, now, 0
	return held, true
}

// severe answers 500 under a fresh incident code and logs the cause under
// that code. The body is the call's own answer with its message set (A.6)
// when the call has one, else the severe form of A.7.
func (c *call) severe(cause error) {
	code := c.logIncident("request failed", cause)
	c.writeSevere(msg.InternalError.With(code), code)
}

// logIncident logs cause at ERROR under msg and a fresh incident code,
// which it returns for the answer.
func (c *call) logIncident(line string, cause error) string {
	code := incidentCode()
	c.s.log.Error(line,
		"incident", code,
		"request_id", c.reqID,
		"method", c.rt.method,
		"route", c.rt.pattern,
		"user", c.p.Username,
		"err", cause,
	)
	return code
}

// outcomeUnknown answers a change whose commit the store could not
// confirm (tenant.ErrOutcomeUnknown) as a severe failure: 500 with an
// incident code, never a 503, which would tell the client the call was
// not made and may be sent again as it is (a create would then be made
// twice). The message says to check before repeating; the log line
// carries the incident code and the cause.
func (c *call) outcomeUnknown(cause error) {
	code := c.logIncident("request failed: commit outcome unknown", cause)
	c.writeSevere(msg.OutcomeUnknown.With(code), code)
}

// writeSevere writes the 500 of incident saying m in the caller's
// language: the call's own answer with m in its message field and m's
// code beside it (A.6), or the severe form of A.7.
func (c *call) writeSevere(m msg.Message, incident string) {
	text := m.In(langOf(c.rc))
	c.rc.Response.ResetBody()
	observeErrorAnswer(func() ErrorAnswer {
		return ErrorAnswer{Status: fasthttp.StatusInternalServerError, Route: c.rt.method + " " + c.rt.pattern, Message: m}
	})
	if c.a6 != nil {
		writeJSON(c.rc, fasthttp.StatusInternalServerError, c.a6(m.Code(), text))
		return
	}
	writeJSON(c.rc, fasthttp.StatusInternalServerError, api.SevereErrorBody{Error: text, Code: m.Code(), Incident: incident})
}

// panicked turns a recovered panic into a severe answer.
func (c *call) panicked(v any) {
	code := incidentCode()
	c.s.log.Error("handler panicked",
		"incident", code,
		"request_id", c.reqID,
		"method", c.rt.method,
		"route", c.rt.pattern,
		"panic", fmt.Sprint(v),
	)
	c.rc.Response.Header.Del(fasthttp.HeaderRetryAfter)
	c.shed = false
	c.writeSevere(msg.InternalError.With(code), code)
}

// incidentCode is a short random code a caller can quote.
func incidentCode() string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// writeAPIError writes ae in the A.7 form, in the language of the
// request's Accept-Language; rt is the route answered (nil for none).
func writeAPIError(rc *fasthttp.RequestCtx, rt *route, ae *apiError) {
	lang := langOf(rc)
	b := api.ErrorBody{StatusCode: ae.status, Code: ae.msg.Code(), Message: ae.raw}
	if ae.raw == "" {
		b.Message = ae.msg.In(lang)
	}
	switch {
	case ae.fields != nil:
		b.Errors, b.Codes = msg.Render(ae.fields, lang), msg.Codes(ae.fields)
	case ae.rawFields != nil:
		b.Errors = ae.rawFields
	default:
		b.Errors = map[string][]string{}
	}
	if ae.retryAfter > 0 {
		secs := int((ae.retryAfter + time.Second - 1) / time.Second)
		rc.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(secs))
	}
	for k, v := range ae.header {
		rc.Response.Header.Set(k, v)
	}
	observeErrorAnswer(func() ErrorAnswer {
		route := ""
		if rt != nil {
			route = rt.method + " " + rt.pattern
		}
		return ErrorAnswer{Status: ae.status, Route: route, Message: ae.msg, Raw: ae.raw, Fields: ae.fields, RawFields: ae.rawFields}
	})
	writeJSON(rc, ae.status, b)
}

// langOf is the language the caller asks for in Accept-Language.
func langOf(rc *fasthttp.RequestCtx) msg.Lang {
	return msg.FromAcceptLanguage(string(rc.Request.Header.Peek(fasthttp.HeaderAcceptLanguage)))
}

const contentTypeJSON = "application/json; charset=utf-8"

// writeJSON writes v as the JSON answer with status.
func writeJSON(rc *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own answer types reach here; they always marshal.
		b = []byte(`{"error":"answer could not be encoded"}`)
		status = fasthttp.StatusInternalServerError
	}
	rc.SetStatusCode(status)
	rc.SetContentType(contentTypeJSON)
	rc.SetBody(b)
}
