package recepcion

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Op names the exchange a failure belongs to. It is also a metric label.
type Op string

// The exchanges of the client.
const (
	OpToken  Op = "token"
	OpSubmit Op = "submit"
	OpStatus Op = "status"
	OpLogout Op = "logout"
)

// Sentinels callers can test with errors.Is on an *APIError.
var (
	// ErrNotFound: the tax authority does not know the clave (404 on
	// status): it never received it, or its sandbox was wiped.
	ErrNotFound = errors.New("clave unknown to the tax authority")
	// ErrCredentials: the token service refused the company's user or
	// password. Trying again will not help until they are corrected.
	ErrCredentials = errors.New("tax-authority user or password refused")
	// ErrUnauthorized: the reception API refused a freshly obtained token.
	ErrUnauthorized = errors.New("tax authority refused the access token")
	// ErrMissingCredentials: the call was not made because the company has
	// no tax-authority user or password. Like ErrCredentials, trying again
	// will not help until they are set.
	ErrMissingCredentials = errors.New("the company has no tax-authority user or password")
)

// APIError is an answer of the tax authority whose status is not a success.
// It is built only by Check.
type APIError struct {
	Op     Op
	Status int
	// Cause is the tax authority's reason: the X-Error-Cause header of the
	// reception API, or the token service's error and description.
	Cause string
	// RetryAfter is the wait the answer asked for (Retry-After), zero when
	// it did not say.
	RetryAfter time.Duration
	// Retryable says whether the same request may succeed later.
	Retryable bool
	// MaybeReceived says whether the tax authority may have received the
	// request despite the failure (a 5xx answer to a submission can come
	// from a gateway after the service took the document). When true, ask
	// Status before submitting the same clave again.
	MaybeReceived bool
	// Outage, on a token-service refusal that looks like wrong
	// credentials, says why it is taken for an outage of the token service
	// instead (see Options.CredentialsTrust): it is then retryable and
	// does not match ErrCredentials.
	Outage string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tax authority %s: status %d", e.Op, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		fmt.Fprintf(&b, " %s", t)
	}
	if e.Cause != "" {
		fmt.Fprintf(&b, ": %s", e.Cause)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound), ErrCredentials and ErrUnauthorized
// work on an *APIError.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Op == OpStatus && e.Status == http.StatusNotFound
	case ErrCredentials:
		return e.Op == OpToken && e.Outage == "" && (e.Status == http.StatusBadRequest || e.Status == http.StatusUnauthorized)
	case ErrUnauthorized:
		return e.Op != OpToken && e.Status == http.StatusUnauthorized
	}
	return false
}

// Check classifies an answer of the tax authority by its status: nil for a
// 2xx, an *APIError otherwise. It is the one place where a status becomes
// retryable or not; the body must already be read (token-service errors
// carry their reason in it).
func Check(op Op, status int, header http.Header, body []byte) error {
	if status >= 200 && status <= 299 {
		return nil
	}
	e := &APIError{
		Op:         op,
		Status:     status,
		Cause:      cause(op, header, body),
		RetryAfter: RetryAfter(header),
		Retryable:  retryableStatus(status),
	}
	e.MaybeReceived = op == OpSubmit && status >= 500
	return e
}

// retryableStatus is the classification table of answers that are not a
// success:
//
//   - 408 Request Timeout, 425 Too Early, 429 Too Many Requests: retryable.
//   - every other 3xx and 4xx: not retryable (the request must change:
//     400 with X-Error-Cause is a document the service will not take as
//     sent, 401 after a fresh token and 403 are credentials, 404 an unknown
//     clave or a wrong base URL, 413 a too-large body).
//   - 5xx: retryable, except the ones that say the request or the path can
//     never work: 501 Not Implemented, 505 HTTP Version Not Supported, 506
//     Variant Also Negotiates, 508 Loop Detected, 510 Not Extended and 511
//     Network Authentication Required (a captive proxy).
func retryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported,
		http.StatusVariantAlsoNegotiates, http.StatusLoopDetected,
		http.StatusNotExtended, http.StatusNetworkAuthenticationRequired:
		return false
	}
	return status >= 500 && status <= 599
}

// maxCause bounds the reason kept from an answer.
const maxCause = 512

func cause(op Op, header http.Header, body []byte) string {
	c := strings.TrimSpace(header.Get("X-Error-Cause"))
	if c == "" {
		c = strings.TrimSpace(header.Get("Validation-Exception"))
	}
	if c == "" && op == OpToken {
		c = oidcError(body)
	}
	if len(c) > maxCause {
		c = c[:maxCause]
	}
	return c
}

// MaxRetryAfter bounds a Retry-After read from the tax authority: a larger
// one (or one that would overflow a time.Duration) is taken as this, so
// that a wrong header can neither make a wait negative nor park documents
// for days.
const MaxRetryAfter = time.Hour

// RetryAfter reads an answer's Retry-After in seconds or as an HTTP date,
// clamped to [0, MaxRetryAfter]. The tax authority's other services (its
// public registries) are read with it too.
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 64); err == nil {
		if s >= uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, MaxRetryAfter)
		}
	}
	return 0
}

// TransportKind says how an exchange failed without a readable answer. It
// is also a metric label.
type TransportKind string

// The transport failures the client tells apart.
const (
	KindTimeout     TransportKind = "timeout"     // the call's deadline passed
	KindCanceled    TransportKind = "canceled"    // the caller canceled
	KindRefused     TransportKind = "refused"     // connection refused
	KindUnreachable TransportKind = "unreachable" // no route to the host or network
	KindReset       TransportKind = "reset"       // connection reset or broken pipe
	KindCutOff      TransportKind = "cut_off"     // connection closed before the whole answer arrived
	KindDNS         TransportKind = "dns"         // the host name did not resolve
	KindTLS         TransportKind = "tls"         // certificate or TLS protocol failure
	KindUnreadable  TransportKind = "unreadable"  // an answer arrived but cannot be decoded
	KindTooLarge    TransportKind = "too_large"   // the answer exceeds MaxResponseBytes
	KindBadRequest  TransportKind = "bad_request" // the request could not be built (bad URL)
	KindOther       TransportKind = "other"       // anything else the network reports
)

// TransportError is a failure to get a readable answer from the tax
// authority.
type TransportError struct {
	Op   Op
	Kind TransportKind
	// Retryable says whether trying again may succeed.
	Retryable bool
	// MaybeReceived says whether the request may have reached the tax
	// authority: true when the failure came after the request was written
	// (a timeout while waiting for the answer, a connection cut while
	// reading it). Ask Status before submitting the same clave again.
	MaybeReceived bool
	Err           error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("tax authority %s: %s: %v", e.Op, e.Kind, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// ClassifyTransport turns an error of an HTTP exchange into a
// *TransportError. written tells whether the whole request had been written
// to the connection when the error happened.
func ClassifyTransport(op Op, err error, written bool) *TransportError {
	var te *TransportError
	if errors.As(err, &te) {
		return te
	}
	e := &TransportError{Op: op, Err: err, MaybeReceived: written}
	var (
		dnsErr   *net.DNSError
		unknownA x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
		netErr   net.Error
	)
	switch {
	case errors.Is(err, context.Canceled):
		// The caller gave up (shutdown, client gone): not a failure of the
		// tax authority, and trying again under the same context is
		// pointless. The caller decides.
		e.Kind, e.Retryable = KindCanceled, false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		e.Kind, e.Retryable = KindTimeout, true
	case errors.As(err, &dnsErr):
		// A name that does not exist is a configuration error; a resolver
		// that timed out or failed temporarily is not.
		e.Kind, e.Retryable, e.MaybeReceived = KindDNS, !dnsErr.IsNotFound || dnsErr.IsTemporary || dnsErr.IsTimeout, false
	case errors.As(err, &unknownA), errors.As(err, &hostErr), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &record), errors.As(err, &alert):
		e.Kind, e.Retryable, e.MaybeReceived = KindTLS, false, false
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind, e.Retryable, e.MaybeReceived = KindRefused, true, false
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETDOWN), errors.Is(err, syscall.EHOSTDOWN):
		e.Kind, e.Retryable, e.MaybeReceived = KindUnreachable, true, false
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		e.Kind, e.Retryable = KindReset, true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed),
		strings.Contains(err.Error(), "server closed"):
		e.Kind, e.Retryable = KindCutOff, true
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Kind, e.Retryable = KindTimeout, true
	default:
		e.Kind, e.Retryable = KindOther, true
	}
	return e
}

// outcome is the bounded metric label for the result of one exchange.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusTooManyRequests:
			return "rate_limited"
		case ae.Status == http.StatusUnauthorized:
			return "unauthorized"
		case ae.Status >= 500:
			return "server_error"
		default:
			return "client_error"
		}
	}
	var te *TransportError
	if errors.As(err, &te) {
		return string(te.Kind)
	}
	return "other"
}
