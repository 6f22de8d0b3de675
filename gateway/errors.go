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
	"facturad/tenant"
)

// apiError is an answer the gateway decided on itself: a status, a message
// and, for a 400, the offending fields.
type apiError struct {
	status     int
	message    string
	fields     map[string][]string
	retryAfter time.Duration
	header     map[string]string // further headers of the answer
	// shed marks a 503 the service chose because of load or a rollout
	// (see shedder): counted as status="shed".
	shed bool
}

func (e *apiError) Error() string { return e.message }

// The messages of the A.7 forms.
const (
	msgValidation = "One or more validation errors occurred."
	msgUnauth     = "Missing or invalid credentials: send AuthToken and Authorization: Basic of one API user."
	msgNotFound   = "Not found."
	msgTooLarge   = "The request body is too large."
	msgApology    = "Sorry, something went wrong on our side; please report incident "
	msgUnavail    = "The service cannot complete this call right now: its data store is unavailable or did not answer in time. Send the same request again shortly."
	// msgUnknown follows msgApology and the incident code when a change
	// may or may not have been stored (decision 136).
	msgUnknown = " The data store did not confirm this change: it may have been made. Check whether it was (list or read it) before sending the request again."
)

var errTooLarge = &apiError{status: fasthttp.StatusRequestEntityTooLarge, message: msgTooLarge}

// invalid is a 400 on one field.
func invalid(field, msg string) *apiError {
	return &apiError{status: fasthttp.StatusBadRequest, message: msgValidation, fields: map[string][]string{field: {msg}}}
}

// fieldErrorer is an error that names the request fields at fault (the
// body decoders' *api.FieldError and the tenant service's and the
// pipeline's validation errors expose it).
type fieldErrorer interface {
	FieldErrors() map[string][]string
}

// spanishFieldErrorer is a fieldErrorer that has its messages in Spanish
// too (the registry checks' refusals).
type spanishFieldErrorer interface {
	SpanishFieldErrors() map[string][]string
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
		fe fieldErrorer
		se statusError
		qe *tenant.QuotaError
		un *tenant.ArchiveUnavailableError
		ie *tenant.IVAIncompleteError
	)
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &qe):
		ae = quotaRefusal(qe.QuotaUse, c.spanish())
	case errors.As(err, &un):
		// Only the archive holds the parts and it cannot be read now:
		// the metadata still answers elsewhere (A.15).
		ae = &apiError{status: fasthttp.StatusServiceUnavailable, retryAfter: un.RetryAfter(), message: un.Error()}
	case errors.As(err, &ie):
		// The stored documents cannot make a whole month: named, not
		// hidden behind an incident code (decision 112).
		ae = &apiError{status: ie.HTTPStatus(), message: ie.Error()}
	case errors.As(err, &ce):
		ae = &apiError{status: fasthttp.StatusUnauthorized, message: msgUnauth + " " + ce.reason}
	case errors.As(err, &fe):
		fields := fe.FieldErrors()
		if sp, ok := fe.(spanishFieldErrorer); ok && c.spanish() {
			fields = sp.SpanishFieldErrors()
		}
		ae = &apiError{status: fasthttp.StatusBadRequest, message: msgValidation, fields: fields}
	case errors.Is(err, tenant.ErrUnauthenticated):
		ae = &apiError{status: fasthttp.StatusUnauthorized, message: msgUnauth}
	case errors.Is(err, tenant.ErrNotFound):
		ae = &apiError{status: fasthttp.StatusNotFound, message: msgNotFound}
	case errors.Is(err, tenant.ErrConflict):
		field, msg := c.conflictField, c.conflictMsg
		if field == "" {
			field, msg = "id", "conflicts with an existing record"
		}
		ae = invalid(field, msg)
	case errors.As(err, &se) && (se.HTTPStatus() == fasthttp.StatusTooManyRequests || se.HTTPStatus() == fasthttp.StatusServiceUnavailable):
		ae = &apiError{status: se.HTTPStatus(), message: err.Error()}
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
	writeAPIError(c.rc, ae)
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
	writeAPIError(c.rc, &apiError{status: fasthttp.StatusServiceUnavailable, retryAfter: after, message: msgUnavail})
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
	c.writeSevere(c.logIncident("request failed", cause))
}

// logIncident logs cause at ERROR under msg and a fresh incident code,
// which it returns for the answer.
func (c *call) logIncident(msg string, cause error) string {
	code := incidentCode()
	c.s.log.Error(msg,
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
	c.writeSevere(c.logIncident("request failed: commit outcome unknown", cause), msgUnknown)
}

// writeSevere writes the 500 of incident code, extra (if any) following
// the apology.
func (c *call) writeSevere(code string, extra ...string) {
	msg := msgApology + code + "." + strings.Join(extra, "")
	c.rc.Response.ResetBody()
	if c.a6 != nil {
		writeJSON(c.rc, fasthttp.StatusInternalServerError, c.a6(msg))
		return
	}
	writeJSON(c.rc, fasthttp.StatusInternalServerError, api.SevereErrorBody{Error: msg})
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
	c.writeSevere(code)
}

// incidentCode is a short random code a caller can quote.
func incidentCode() string {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

func writeAPIError(rc *fasthttp.RequestCtx, ae *apiError) {
	fields := ae.fields
	if fields == nil {
		fields = map[string][]string{}
	}
	if ae.retryAfter > 0 {
		secs := int((ae.retryAfter + time.Second - 1) / time.Second)
		rc.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(secs))
	}
	for k, v := range ae.header {
		rc.Response.Header.Set(k, v)
	}
	writeJSON(rc, ae.status, api.ErrorBody{StatusCode: ae.status, Message: ae.message, Errors: fields})
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
