package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Error is an error answer of the service (contract A.6, A.7): any status
// outside 2xx. Use errors.As to read it and errors.Is with the sentinels
// (ErrNotFound, ErrUnavailable...) to branch on its status.
type Error struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the answer's message: "message" of the A.7 form, the
	// apology with its incident code of a severe 500, or the mensaje_api
	// of a call's own answer. It is in the language the client asked for
	// (WithLanguage), English by default.
	Message string
	// Code is the answer's stable code, the same in every language: the
	// A.7 form's and the severe 500's "code" (validation_failed,
	// company_not_found, store_unavailable...; docs/errors.md lists them), an
	// A.6 answer's mensajeApiKey / mensaje_api_key, or a document's
	// mensaje_api_key (KeySendingDocumentError...).
	Code string
	// Codes are the codes of Fields' messages, field by field.
	Codes map[string][]string
	// Incident is the incident code of a severe 500 (also in Message), to
	// quote to the operator.
	Incident string
	// Fields are the offending request fields of a 400, by their request
	// paths (detalleServicio[2].cantidad, ReceptorRequest.CorreoElectronico,
	// id_externo), each with its messages.
	Fields map[string][]string
	// RetryAfter is the answer's Retry-After (429 and 503), 0 when absent.
	RetryAfter time.Duration
	// RequestID is the answer's X-Request-Id, to quote to the operator.
	RequestID string
	// Document is the Document body of a send or check answered with 500
	// (mensaje_api_key SendingDocumentError or ExpiredClientCertificate):
	// the document exists, under its clave, and the service keeps it.
	Document *Document
	// Received is the received document of a receive or check of a
	// received document answered with 500: the message exists, under the
	// supplier's clave, and the service keeps it.
	Received *ReceivedDocument
	// Method and Path are the call's.
	Method, Path string

	header http.Header // the answer's, for what a call reads of it
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "facturad: %s %s: %d", e.Method, e.Path, e.StatusCode)
	if e.Message != "" {
		b.WriteString(" ")
		b.WriteString(e.Message)
	}
	if e.Document != nil && e.Document.MensajeAPIKey != "" {
		fmt.Fprintf(&b, " (%s, estado %s)", e.Document.MensajeAPIKey, e.Document.Estado)
	}
	if len(e.Fields) > 0 {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+": "+strings.Join(e.Fields[k], "; "))
		}
		b.WriteString(" [")
		b.WriteString(strings.Join(parts, ", "))
		b.WriteString("]")
	}
	return b.String()
}

// Is matches the sentinel of the answer's status (ErrConflict also
// matches a 409, see its doc).
func (e *Error) Is(target error) bool {
	s, ok := target.(*statusSentinel)
	return ok && slices.Contains(s.statuses, e.StatusCode)
}

// Temporary reports whether the same request may succeed later unchanged:
// a 429 or a 503.
func (e *Error) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable
}

// statusSentinel is an error that an *Error of one of its statuses is.
type statusSentinel struct {
	text     string
	statuses []int
}

func (s *statusSentinel) Error() string { return s.text }

// The sentinels an *Error matches with errors.Is, by status.
var (
	// ErrValidation is a 400: the request is wrong; Error.Fields says where.
	ErrValidation error = &statusSentinel{"facturad: invalid request", []int{http.StatusBadRequest}}
	// ErrUnauthorized is a 401: the AuthToken and Basic pair is missing,
	// wrong, or of a user that is switched off.
	ErrUnauthorized error = &statusSentinel{"facturad: unauthenticated", []int{http.StatusUnauthorized}}
	// ErrNotFound is a 404: no such resource, or one that is not yours
	// (another tenant's data is never shown), or an XML that does not
	// exist yet.
	ErrNotFound error = &statusSentinel{"facturad: not found", []int{http.StatusNotFound}}
	// ErrConflict is a 409. The contract reports conflicts with existing
	// data as a 400 on the field at fault (id_externo used for another
	// document, usuario taken, Identificacion of an existing company,
	// sucursal of an existing branch), so test those with ErrValidation
	// and Error.Fields. The PDF of a document that has no signed XML yet
	// (estado 00) is a 409 too.
	ErrConflict error = &statusSentinel{"facturad: conflict", []int{http.StatusConflict}}
	// ErrQuota is a 402: the company has numbered its monthly quota
	// (cuotaMensual, A.14) and the send numbered nothing;
	// Error.Fields["cuotaMensual"] says how many and of which month. A
	// repeat of an id_externo already sent is never refused so.
	ErrQuota error = &statusSentinel{"facturad: monthly quota reached", []int{http.StatusPaymentRequired}}
	// ErrTooLarge is a 413: the body is over the call's limit.
	ErrTooLarge error = &statusSentinel{"facturad: request too large", []int{http.StatusRequestEntityTooLarge}}
	// ErrRateLimited is a 429: too many calls; Error.RetryAfter says when
	// to come back. The client already retried within its policy.
	ErrRateLimited error = &statusSentinel{"facturad: rate limited", []int{http.StatusTooManyRequests}}
	// ErrUnavailable is a 503: the service is overloaded, stopping, or
	// still sending a document with the same id_externo; nothing was done.
	// The client already retried within its policy.
	ErrUnavailable error = &statusSentinel{"facturad: unavailable", []int{http.StatusServiceUnavailable}}
)

// errorBody holds every form an error answer takes: the A.7 forms, and
// the fields that tell a call's own answer with its message (A.6: the
// company and branch calls' mensajeApi, the others' mensaje_api; a
// Document by its mensaje_api_key or clave, a received document by its
// consecutivoReceptor).
type errorBody struct {
	Code        string              `json:"code"`
	Message     string              `json:"message"`
	Errors      map[string][]string `json:"errors"`
	Codes       map[string][]string `json:"codes"`
	Error       string              `json:"error"`
	Incident    string              `json:"incident"`
	MensajeAPI  string              `json:"mensajeApi"`
	MensajeAPI2 string              `json:"mensaje_api"`
	KeyCamel    string              `json:"mensajeApiKey"`
	Key         string              `json:"mensaje_api_key"`
	Clave       string              `json:"clave"`
	// ConsecutivoReceptor marks a received document's answer (A.11).
	ConsecutivoReceptor *string `json:"consecutivoReceptor"`
}

// newError reads an error answer. A body that is not JSON (a proxy's
// page) leaves the message to the status text.
func newError(method, path string, resp *http.Response, body []byte) *Error {
	e := &Error{
		StatusCode: resp.StatusCode,
		RequestID:  resp.Header.Get("X-Request-Id"),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Method:     method,
		Path:       path,
		header:     resp.Header,
	}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil {
		e.Fields, e.Codes, e.Incident = eb.Errors, eb.Codes, eb.Incident
		for _, c := range []string{eb.Code, eb.KeyCamel, eb.Key} {
			if c != "" {
				e.Code = c
				break
			}
		}
		for _, m := range []string{eb.Message, eb.Error, eb.MensajeAPI2, eb.MensajeAPI} {
			if m != "" {
				e.Message = m
				break
			}
		}
		if eb.ConsecutivoReceptor != nil {
			var r ReceivedDocument
			if json.Unmarshal(body, &r) == nil {
				e.Received = &r
			}
		} else if eb.Key == KeySendingDocumentError || eb.Key == KeyExpiredClientCertificate || eb.Clave != "" {
			var d Document
			if json.Unmarshal(body, &d) == nil {
				e.Document = &d
			}
		}
	}
	if len(e.Fields) == 0 {
		e.Fields = nil
	}
	if len(e.Codes) == 0 {
		e.Codes = nil
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// parseRetryAfter reads a Retry-After value: seconds, or an HTTP date.
// Anything else, or a time already past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
