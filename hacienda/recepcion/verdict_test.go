package recepcion_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
)

// TestJudge is the one table from a failed call to its verdict: every
// status an answer can carry, for a submission and a status query, and
// every transport failure the client tells apart.
func TestJudge(t *testing.T) {
	type row struct {
		name                    string
		err                     error
		kind                    recepcion.Kind
		maybeReceived, inFlight bool
	}
	h := http.Header{"X-Error-Cause": {"la causa"}, "Retry-After": {"3"}}
	api := func(op recepcion.Op, status int) error { return recepcion.Check(op, status, h, nil) }
	rows := []row{
		{"status 404 (unknown clave)", api(recepcion.OpStatus, 404), recepcion.NotFound, false, false},
		{"token 400", api(recepcion.OpToken, 400), recepcion.BadCredentials, false, false},
		{"token 401", api(recepcion.OpToken, 401), recepcion.BadCredentials, false, false},
		{"token 403", api(recepcion.OpToken, 403), recepcion.BadCredentials, false, false},
		{"token 503", api(recepcion.OpToken, 503), recepcion.Transient, false, false},
		{"missing credentials", fmt.Errorf("x: %w", recepcion.ErrMissingCredentials), recepcion.BadCredentials, false, false},
		{"status 401 after a fresh token", api(recepcion.OpStatus, 401), recepcion.Transient, false, false},
		{"connection refused", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ECONNREFUSED, true), recepcion.Transient, false, false},
		{"reset after writing", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ECONNRESET, true), recepcion.Transient, true, false},
		{"cut off", recepcion.ClassifyTransport(recepcion.OpSubmit, io.ErrUnexpectedEOF, true), recepcion.Transient, true, false},
		{"timeout after writing", recepcion.ClassifyTransport(recepcion.OpSubmit, context.DeadlineExceeded, true), recepcion.Transient, true, true},
		{"timeout before writing", recepcion.ClassifyTransport(recepcion.OpSubmit, context.DeadlineExceeded, false), recepcion.Transient, false, false},
		{"canceled after writing", recepcion.ClassifyTransport(recepcion.OpSubmit, context.Canceled, true), recepcion.Transient, true, true},
		{"DNS name unknown", recepcion.ClassifyTransport(recepcion.OpSubmit, &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false), recepcion.Broken, false, false},
		{"TLS unknown authority", recepcion.ClassifyTransport(recepcion.OpSubmit, x509.UnknownAuthorityError{}, false), recepcion.Broken, false, false},
		{"the caller's own deadline", context.DeadlineExceeded, recepcion.Transient, false, false},
		{"some other error", errors.New("store down"), recepcion.Transient, false, false},
	}
	for status := 300; status <= 599; status++ {
		kind := recepcion.Broken
		switch {
		case status == 400 || status == 409 || status == 413 || status == 422:
			kind = recepcion.Refused
		case status == 403:
			kind = recepcion.BadCredentials
		case status == 401, wantRetryable(status):
			kind = recepcion.Transient
		}
		rows = append(rows, row{fmt.Sprintf("submit %d", status), api(recepcion.OpSubmit, status), kind,
			status >= 500 && kind != recepcion.Refused, false})
		if kind == recepcion.Refused {
			// Only a submission can be refused as sent.
			kind = recepcion.Broken
		}
		if status != 404 {
			rows = append(rows, row{fmt.Sprintf("status %d", status), api(recepcion.OpStatus, status), kind, false, false})
		}
	}
	for _, r := range rows {
		v := recepcion.Judge(r.err)
		if v.Kind != r.kind || v.MaybeReceived != r.maybeReceived || v.InFlight != r.inFlight {
			t.Errorf("%s: %+v, want kind %s, maybe received %v, in flight %v", r.name, v, r.kind, r.maybeReceived, r.inFlight)
		}
		var ae *recepcion.APIError
		if errors.As(r.err, &ae) && ae.Op != recepcion.OpToken && v.Kind != recepcion.NotFound && v.RetryAfter != 3*time.Second {
			t.Errorf("%s: retry after %v, want 3s", r.name, v.RetryAfter)
		}
		if v.Kind == recepcion.Refused && v.Reason != "la causa" {
			t.Errorf("%s: reason %q, want the tax authority's cause", r.name, v.Reason)
		}
		if want := strings.Contains(r.name, "timeout") || strings.Contains(r.name, "canceled") || strings.Contains(r.name, "deadline"); v.TimedOut != want {
			t.Errorf("%s: timed out %v, want %v", r.name, v.TimedOut, want)
		}
		if v.SlowDown != (ae != nil && ae.Status == 429) {
			t.Errorf("%s: slow down %v", r.name, v.SlowDown)
		}
	}
	if v := recepcion.Judge(nil); v.Kind != "" {
		t.Errorf("no error judged %+v", v)
	}
}
