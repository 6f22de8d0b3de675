package pipeline

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// stubSubmitter fails every submission with err and answers every status
// with "unknown clave", counting both.
type stubSubmitter struct {
	err               error
	submits, statuses atomic.Int64
}

func (s *stubSubmitter) Submit(context.Context, recepcion.Credentials, recepcion.Submission) (recepcion.Receipt, error) {
	s.submits.Add(1)
	return recepcion.Receipt{}, s.err
}

func (s *stubSubmitter) Status(context.Context, recepcion.Credentials, string) (recepcion.Status, error) {
	s.statuses.Add(1)
	return recepcion.Status{}, recepcion.Check(recepcion.OpStatus, http.StatusNotFound, http.Header{}, nil)
}

func (s *stubSubmitter) CheckLogin(context.Context, recepcion.Credentials) error { return s.err }

func apiErr(op recepcion.Op, status int) error {
	h := http.Header{}
	h.Set("X-Error-Cause", "causa de prueba")
	return recepcion.Check(op, status, h, nil)
}

// TestClassificationTable is the table of issue 5's acceptance: every
// status and transport failure the client can meet → retryable or not (the
// client's classification), and the state and mensaje_api_key the send
// call answers with (the pipeline's), through the whole send call.
func TestClassificationTable(t *testing.T) {
	type row struct {
		name   string
		err    error
		kind   recepcion.Kind // as the client judges it
		estado tenant.State   // as the send call answers
		asks   bool           // the send asks the status before answering
	}
	rows := []row{
		{"submit 400 (X-Error-Cause)", apiErr(recepcion.OpSubmit, 400), recepcion.Refused, tenant.StateError, true},
		{"submit 401 after a fresh token", apiErr(recepcion.OpSubmit, 401), recepcion.Transient, tenant.StateNotSentYet, false},
		{"submit 403 (user may not act for the issuer)", apiErr(recepcion.OpSubmit, 403), recepcion.BadCredentials, tenant.StateNotSentYet, false},
		{"submit 404 (wrong base URL)", apiErr(recepcion.OpSubmit, 404), recepcion.Broken, tenant.StateNotSentYet, false},
		{"submit 408", apiErr(recepcion.OpSubmit, 408), recepcion.Transient, tenant.StateNotSentYet, false},
		{"submit 409", apiErr(recepcion.OpSubmit, 409), recepcion.Refused, tenant.StateError, true},
		{"submit 413", apiErr(recepcion.OpSubmit, 413), recepcion.Refused, tenant.StateError, true},
		{"submit 422", apiErr(recepcion.OpSubmit, 422), recepcion.Refused, tenant.StateError, true},
		{"submit 425", apiErr(recepcion.OpSubmit, 425), recepcion.Transient, tenant.StateNotSentYet, false},
		{"submit 429", apiErr(recepcion.OpSubmit, 429), recepcion.Transient, tenant.StateNotSentYet, false},
		{"submit 500", apiErr(recepcion.OpSubmit, 500), recepcion.Transient, tenant.StateNotSentYet, true},
		{"submit 501", apiErr(recepcion.OpSubmit, 501), recepcion.Broken, tenant.StateNotSentYet, true},
		{"submit 502", apiErr(recepcion.OpSubmit, 502), recepcion.Transient, tenant.StateNotSentYet, true},
		{"submit 503", apiErr(recepcion.OpSubmit, 503), recepcion.Transient, tenant.StateNotSentYet, true},
		{"submit 504", apiErr(recepcion.OpSubmit, 504), recepcion.Transient, tenant.StateNotSentYet, true},
		{"submit 505", apiErr(recepcion.OpSubmit, 505), recepcion.Broken, tenant.StateNotSentYet, true},
		{"submit 511 (captive proxy)", apiErr(recepcion.OpSubmit, 511), recepcion.Broken, tenant.StateNotSentYet, true},
		{"token 400 (credentials refused)", apiErr(recepcion.OpToken, 400), recepcion.BadCredentials, tenant.StateNotSentYet, false},
		{"token 401 (credentials refused)", apiErr(recepcion.OpToken, 401), recepcion.BadCredentials, tenant.StateNotSentYet, false},
		{"token 503", apiErr(recepcion.OpToken, 503), recepcion.Transient, tenant.StateNotSentYet, false},
		{"connection refused", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ECONNREFUSED, false), recepcion.Transient, tenant.StateNotSentYet, false},
		{"network unreachable", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ENETUNREACH, false), recepcion.Transient, tenant.StateNotSentYet, false},
		{"reset after sending", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ECONNRESET, true), recepcion.Transient, tenant.StateNotSentYet, true},
		{"reset before sending", recepcion.ClassifyTransport(recepcion.OpSubmit, syscall.ECONNRESET, false), recepcion.Transient, tenant.StateNotSentYet, false},
		{"answer cut off", recepcion.ClassifyTransport(recepcion.OpSubmit, io.ErrUnexpectedEOF, true), recepcion.Transient, tenant.StateNotSentYet, true},
		// A submission that timed out or was canceled after writing may
		// still reach the tax authority: its status is not asked before
		// the deadline plus InFlightMargin (checked below).
		{"timeout waiting for the answer", recepcion.ClassifyTransport(recepcion.OpSubmit, context.DeadlineExceeded, true), recepcion.Transient, tenant.StateNotSentYet, false},
		{"timeout before sending", recepcion.ClassifyTransport(recepcion.OpSubmit, context.DeadlineExceeded, false), recepcion.Transient, tenant.StateNotSentYet, false},
		{"canceled (shutdown)", recepcion.ClassifyTransport(recepcion.OpSubmit, context.Canceled, true), recepcion.Transient, tenant.StateNotSentYet, false},
		{"DNS name unknown", recepcion.ClassifyTransport(recepcion.OpSubmit, &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false), recepcion.Broken, tenant.StateNotSentYet, false},
		{"DNS temporary", recepcion.ClassifyTransport(recepcion.OpSubmit, &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, false), recepcion.Transient, tenant.StateNotSentYet, false},
		{"TLS unknown authority", recepcion.ClassifyTransport(recepcion.OpSubmit, x509.UnknownAuthorityError{}, false), recepcion.Broken, tenant.StateNotSentYet, false},
		{"answer too large", &recepcion.TransportError{Op: recepcion.OpSubmit, Kind: recepcion.KindTooLarge, MaybeReceived: true, Err: errors.New("big")}, recepcion.Broken, tenant.StateNotSentYet, true},
		{"other network failure", recepcion.ClassifyTransport(recepcion.OpSubmit, errors.New("something odd"), true), recepcion.Transient, tenant.StateNotSentYet, true},
	}
	// Every other status an answer can carry, by the rules: a 2xx is a
	// success; 400, 409, 413 and 422 refuse the document as sent (03);
	// everything else leaves it 05 to be retried.
	covered := map[int]bool{}
	for _, r := range rows {
		var ae *recepcion.APIError
		if errors.As(r.err, &ae) && ae.Op == recepcion.OpSubmit {
			covered[ae.Status] = true
		}
	}
	for status := 300; status <= 599; status++ {
		if covered[status] {
			continue
		}
		kind := recepcion.Broken
		switch {
		case status == 408 || status == 425 || status == 429:
			kind = recepcion.Transient
		case status >= 500 && !slices.Contains([]int{501, 505, 506, 508, 510, 511}, status):
			kind = recepcion.Transient
		}
		rows = append(rows, row{fmt.Sprintf("submit %d", status), apiErr(recepcion.OpSubmit, status),
			kind, tenant.StateNotSentYet, status >= 500})
	}

	b := setup(t, setupOptions{})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := recepcion.Judge(r.err).Kind; got != r.kind {
				t.Errorf("client verdict: %s, want %s", got, r.kind)
			}
			// Refused credentials keep the document in 05 without retries:
			// every login with them counts against the taxpayer's account.
			wantRetried := r.estado == tenant.StateNotSentYet && r.kind != recepcion.BadCredentials
			v := classifySubmit(r.err)
			if v.Phase.Estado() != r.estado || v.Retry != wantRetried {
				t.Errorf("verdict %+v, want estado %s", v, r.estado)
			}

			// Through the whole send call.
			stub := &stubSubmitter{err: r.err}
			b.p.o.Submitter = stub
			out := b.mustSend(t, request("01", "class-"+r.name))
			if !out.Failed || out.Key != KeySendingDocumentError || out.Estado != r.estado || out.Message == "" {
				t.Fatalf("send answered %s", describe(out))
			}
			if asked := stub.statuses.Load() > 0; asked != r.asks {
				t.Errorf("asked the status: %v, want %v", asked, r.asks)
			}
			d := b.stored(t, out.Document.Clave)
			if d.Estado != r.estado || len(d.SignedXML) == 0 {
				t.Errorf("stored estado %s, xml %d bytes", d.Estado, len(d.SignedXML))
			}
			if recepcion.Judge(r.err).InFlight && !d.NextAttemptAt.After(b.p.o.Clock().Add(b.p.o.InFlightMargin)) {
				t.Errorf("a submission that may be in flight is retried at %v, before its deadline plus the margin", d.NextAttemptAt)
			}
			if retried := !d.NextAttemptAt.IsZero(); retried != wantRetried {
				t.Errorf("scheduled for a retry: %v", retried)
			}
			if stub.submits.Load() != 1 {
				t.Errorf("%d submissions", stub.submits.Load())
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	base, max := time.Second, time.Minute
	for n := 0; n < 12; n++ {
		want := base << n
		if want > max {
			want = max
		}
		for range 50 {
			d := backoff(base, max, n, 0)
			if d < want/2 || d > want {
				t.Fatalf("attempt %d: %s, want within [%s, %s]", n, d, want/2, want)
			}
		}
	}
	if d := backoff(base, max, 0, 30*time.Second); d != 30*time.Second {
		t.Errorf("Retry-After floor: %s", d)
	}
}

func TestPhaseOfAnswer(t *testing.T) {
	for e, want := range map[recepcion.Estado]tenant.Phase{
		recepcion.EstadoAceptado: tenant.PhaseAccepted, recepcion.EstadoRechazado: tenant.PhaseRejected,
		recepcion.EstadoError: tenant.PhaseFailed, recepcion.EstadoRecibido: tenant.PhaseSubmitted,
		recepcion.EstadoProcesando: tenant.PhaseSubmitted, "desconocido": tenant.PhaseSubmitted,
	} {
		if got := phaseOfAnswer(e); got != want {
			t.Errorf("%s → %s, want %s", e, got, want)
		}
	}
}
