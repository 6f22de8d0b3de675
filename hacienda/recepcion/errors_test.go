package recepcion_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/signer"
)

// wantRetryable is the classification the client must give each status
// that is not a success (the table of retryableStatus, written out).
func wantRetryable(code int) bool {
	switch code {
	case 408, 425, 429:
		return true
	case 501, 505, 506, 508, 510, 511:
		return false
	}
	return code >= 500
}

// fakeAuthority answers the token endpoint with a token and the API with
// the status in code.
type fakeAuthority struct {
	srv       *httptest.Server
	code      atomic.Int64
	tokenCode atomic.Int64
	apiCalls  atomic.Int64
	grants    atomic.Int64
}

func newFakeAuthority(t *testing.T) *fakeAuthority {
	f := &fakeAuthority{}
	f.tokenCode.Store(200)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			f.grants.Add(1)
			code := int(f.tokenCode.Load())
			if code != 200 {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(code)
				_, _ = io.WriteString(w, `{"error":"some_error","error_description":"refused"}`)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "expires_in": 300, "refresh_token": "ref", "refresh_expires_in": 36000, "token_type": "bearer"})
			return
		}
		f.apiCalls.Add(1)
		w.Header().Set("X-Error-Cause", "cause of the test")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(int(f.code.Load()))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAuthority) client(t *testing.T, o recepcion.Options) *recepcion.Client {
	o.Logger = quiet
	o.APIURL, o.TokenURL = f.srv.URL+"/api", f.srv.URL+"/token"
	c, err := recepcion.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStatusTable calls Submit and Status against an authority that
// answers every status from 200 to 599 and checks the classification.
func TestStatusTable(t *testing.T) {
	f := newFakeAuthority(t)
	c := f.client(t, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(1)
	for code := 200; code <= 599; code++ {
		f.code.Store(int64(code))
		before := f.apiCalls.Load()
		_, subErr := c.Submit(ctx, creds, submission(clave, xml))
		calls := f.apiCalls.Load() - before
		_, stErr := c.Status(ctx, creds, clave)
		name := fmt.Sprintf("%d %s", code, http.StatusText(code))

		switch {
		case code < 300:
			if subErr != nil {
				t.Errorf("%s: submit: %v, want success", name, subErr)
			}
			// No JSON in the answer: unreadable, retryable, and the
			// request was received.
			var te *recepcion.TransportError
			if !errors.As(stErr, &te) || te.Kind != recepcion.KindUnreadable || !te.Retryable || !te.MaybeReceived {
				t.Errorf("%s: status: %#v, want a retryable unreadable answer", name, stErr)
			}
			continue
		case code == 401:
			if calls != 2 {
				t.Errorf("%s: submit made %d calls, want 2 (one retry with a new token)", name, calls)
			}
			if !errors.Is(subErr, recepcion.ErrUnauthorized) || !errors.Is(stErr, recepcion.ErrUnauthorized) {
				t.Errorf("%s: %v / %v, want ErrUnauthorized", name, subErr, stErr)
			}
		default:
			if calls != 1 {
				t.Errorf("%s: submit made %d calls, want 1 (the client does not retry by itself)", name, calls)
			}
		}
		for op, err := range map[string]error{"submit": subErr, "status": stErr} {
			var ae *recepcion.APIError
			if !errors.As(err, &ae) {
				t.Errorf("%s: %s: %#v, want *APIError", name, op, err)
				continue
			}
			if ae.Status != code || ae.Cause != "cause of the test" {
				t.Errorf("%s: %s: status %d cause %q", name, op, ae.Status, ae.Cause)
			}
			if ae.Retryable != wantRetryable(code) || retryable(err) != wantRetryable(code) {
				t.Errorf("%s: %s: retryable %v, want %v", name, op, ae.Retryable, wantRetryable(code))
			}
			wantMaybe := op == "submit" && code >= 500
			if maybeReceived(err) != wantMaybe {
				t.Errorf("%s: %s: maybe received %v, want %v", name, op, ae.MaybeReceived, wantMaybe)
			}
			if ae.RetryAfter != 3*time.Second {
				t.Errorf("%s: %s: retry after %v", name, op, ae.RetryAfter)
			}
			if errors.Is(err, recepcion.ErrNotFound) != (op == "status" && code == 404) {
				t.Errorf("%s: %s: ErrNotFound mismatch", name, op)
			}
		}
	}
}

// TestTokenStatusTable does the same for the token service.
func TestTokenStatusTable(t *testing.T) {
	f := newFakeAuthority(t)
	ctx := context.Background()
	clave, _ := claveFor(1)
	for code := 201; code <= 599; code++ {
		f.tokenCode.Store(int64(code))
		c := f.client(t, recepcion.Options{}) // a fresh token cache
		_, err := c.Status(ctx, creds, clave)
		name := fmt.Sprintf("%d %s", code, http.StatusText(code))
		if code < 300 {
			var te *recepcion.TransportError
			if !errors.As(err, &te) || te.Op != recepcion.OpToken || te.Kind != recepcion.KindUnreadable || !te.Retryable {
				t.Errorf("%s: %#v, want an unreadable token answer", name, err)
			}
			continue
		}
		var ae *recepcion.APIError
		if !errors.As(err, &ae) || ae.Op != recepcion.OpToken || ae.Status != code {
			t.Errorf("%s: %#v, want a token *APIError", name, err)
			continue
		}
		if ae.Retryable != wantRetryable(code) {
			t.Errorf("%s: retryable %v, want %v", name, ae.Retryable, wantRetryable(code))
		}
		if (ae.Cause != "some_error: refused" && code != http.StatusNotModified) || ae.MaybeReceived {
			t.Errorf("%s: cause %q maybe received %v", name, ae.Cause, ae.MaybeReceived)
		}
		if errors.Is(err, recepcion.ErrCredentials) != (code == 400 || code == 401) {
			t.Errorf("%s: ErrCredentials mismatch", name)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func opErr(op string, errno error) error {
	return &url.Error{Op: "Post", URL: "https://api/recepcion", Err: &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}}
}

// TestClassifyTransport is the table of every transport failure the client
// can meet, each before and after the request was written.
func TestClassifyTransport(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		kind      recepcion.TransportKind
		retryable bool
		// maybeIfWritten: whether a failure after the request was written
		// leaves it possibly received (false: never received whatever the
		// moment, e.g. a refused connection).
		maybeIfWritten bool
	}{
		{"deadline", &url.Error{Err: context.DeadlineExceeded}, recepcion.KindTimeout, true, true},
		{"net timeout", &url.Error{Err: timeoutErr{}}, recepcion.KindTimeout, true, true},
		{"read timeout", opErr("read", syscall.ETIMEDOUT), recepcion.KindTimeout, true, true},
		{"canceled", &url.Error{Err: context.Canceled}, recepcion.KindCanceled, false, true},
		{"refused", opErr("connect", syscall.ECONNREFUSED), recepcion.KindRefused, true, false},
		{"network unreachable", opErr("connect", syscall.ENETUNREACH), recepcion.KindUnreachable, true, false},
		{"host unreachable", opErr("connect", syscall.EHOSTUNREACH), recepcion.KindUnreachable, true, false},
		{"reset", opErr("read", syscall.ECONNRESET), recepcion.KindReset, true, true},
		{"broken pipe", opErr("write", syscall.EPIPE), recepcion.KindReset, true, true},
		{"aborted", opErr("read", syscall.ECONNABORTED), recepcion.KindReset, true, true},
		{"eof", &url.Error{Err: io.EOF}, recepcion.KindCutOff, true, true},
		{"unexpected eof", &url.Error{Err: io.ErrUnexpectedEOF}, recepcion.KindCutOff, true, true},
		{"server closed", &url.Error{Err: errors.New("http: server closed idle connection")}, recepcion.KindCutOff, true, true},
		{"dns not found", &url.Error{Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api", IsNotFound: true}}}, recepcion.KindDNS, false, false},
		{"dns temporary", &url.Error{Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "api", IsTemporary: true}}}, recepcion.KindDNS, true, false},
		{"dns timeout", &url.Error{Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "timeout", Name: "api", IsTimeout: true}}}, recepcion.KindDNS, true, false},
		{"tls unknown authority", &url.Error{Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, recepcion.KindTLS, false, false},
		{"tls hostname", &url.Error{Err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "api"}}, recepcion.KindTLS, false, false},
		{"tls expired", &url.Error{Err: x509.CertificateInvalidError{Reason: x509.Expired}}, recepcion.KindTLS, false, false},
		{"tls plain http", &url.Error{Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, recepcion.KindTLS, false, false},
		{"tls alert", &url.Error{Err: tls.AlertError(40)}, recepcion.KindTLS, false, false},
		{"other", &url.Error{Err: errors.New("something odd")}, recepcion.KindOther, true, true},
	} {
		for _, written := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/written=%v", tc.name, written), func(t *testing.T) {
				te := recepcion.ClassifyTransport(recepcion.OpSubmit, tc.err, written)
				if te.Kind != tc.kind || te.Retryable != tc.retryable {
					t.Fatalf("got %s retryable=%v, want %s retryable=%v", te.Kind, te.Retryable, tc.kind, tc.retryable)
				}
				if want := written && tc.maybeIfWritten; te.MaybeReceived != want {
					t.Fatalf("maybe received %v, want %v", te.MaybeReceived, want)
				}
				if !errors.Is(te, tc.err) {
					t.Fatal("the cause is not kept")
				}
			})
		}
	}
}

// TestTransportFailures produces the failures for real and checks what the
// client reports.
func TestTransportFailures(t *testing.T) {
	ctx := context.Background()
	clave, xml := unsignedDoc(1)

	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, err := recepcion.New(recepcion.Options{Logger: quiet, APIURL: "http://" + addr + "/api", TokenURL: "http://" + addr + "/token"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Submit(ctx, creds, submission(clave, xml))
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Kind != recepcion.KindRefused || !te.Retryable || te.MaybeReceived || te.Op != recepcion.OpToken {
			t.Fatalf("%#v", err)
		}
	})

	// raw serves the API with a handler that writes raw bytes on the
	// connection.
	raw := func(t *testing.T, answer string) *recepcion.Client {
		f := newFakeAuthority(t)
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString(answer)
			_ = buf.Flush()
			conn.Close()
		}))
		t.Cleanup(api.Close)
		c, err := recepcion.New(recepcion.Options{Logger: quiet, APIURL: api.URL, TokenURL: f.srv.URL + "/token"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("answer cut off", func(t *testing.T) {
		c := raw(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"clave\":")
		_, err := c.Status(ctx, creds, clave)
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Kind != recepcion.KindCutOff || !te.Retryable || !te.MaybeReceived {
			t.Fatalf("%#v", err)
		}
	})
	t.Run("closed before any answer", func(t *testing.T) {
		c := raw(t, "")
		_, err := c.Submit(ctx, creds, submission(clave, xml))
		var te *recepcion.TransportError
		if !errors.As(err, &te) || !te.Retryable || !te.MaybeReceived || (te.Kind != recepcion.KindCutOff && te.Kind != recepcion.KindReset) {
			t.Fatalf("%#v", err)
		}
	})
	t.Run("garbage answer", func(t *testing.T) {
		c := raw(t, "this is not HTTP\r\n\r\n")
		_, err := c.Submit(ctx, creds, submission(clave, xml))
		var te *recepcion.TransportError
		if !errors.As(err, &te) || !te.Retryable || !te.MaybeReceived {
			t.Fatalf("%#v", err)
		}
	})
	for name, body := range map[string]string{
		"unreadable json":   `{"clave": 5`,
		"no ind-estado":     `{"clave": "x"}`,
		"bad base64 answer": `{"clave": "x", "ind-estado": "aceptado", "respuesta-xml": "%%%"}`,
		"answer not xml":    `{"clave": "x", "ind-estado": "aceptado", "respuesta-xml": "bm90IHhtbA=="}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := raw(t, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
			_, err := c.Status(ctx, creds, clave)
			var te *recepcion.TransportError
			if !errors.As(err, &te) || te.Kind != recepcion.KindUnreadable || !te.Retryable {
				t.Fatalf("%#v", err)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		f := newFakeAuthority(t)
		f.code.Store(200)
		c := f.client(t, recepcion.Options{MaxResponseBytes: 10})
		_, err := c.Status(ctx, creds, clave) // the token answer is already larger than 10 bytes
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Kind != recepcion.KindTooLarge || te.Retryable {
			t.Fatalf("%#v", err)
		}
	})
	t.Run("tls unknown authority", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		c, err := recepcion.New(recepcion.Options{Logger: quiet, Environment: recepcion.Production, APIURL: srv.URL, TokenURL: srv.URL + "/token"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Status(ctx, creds, clave)
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Kind != recepcion.KindTLS || te.Retryable {
			t.Fatalf("%#v", err)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		f := newFakeAuthority(t)
		c := f.client(t, recepcion.Options{})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := c.Submit(cctx, creds, submission(clave, xml))
		var te *recepcion.TransportError
		if !errors.As(err, &te) || te.Kind != recepcion.KindCanceled || te.Retryable {
			t.Fatalf("%#v", err)
		}
	})
}

func TestDecodeCallbackSpellings(t *testing.T) {
	for name, body := range map[string]string{
		"get":      `{"clave":"c","fecha":"2026-11-21T10:30:05-06:00","ind-estado":"procesando"}`,
		"callback": `{"clave":"c","fecha":"2026-11-21T10:30:05-06:00","indEstado":"PROCESANDO","respuestaXml":null}`,
		"odd case": `{"Clave":"c","Fecha":"2026-11-21T10:30:05-06:00","IND-ESTADO":"Procesando"}`,
		// A value of another kind is left out, the rest read.
		"other kinds": `{"clave":"c","fecha":"2026-11-21T10:30:05-06:00","ind-estado":"procesando","intentos":3,"detalle":{"a":[1]}}`,
	} {
		t.Run("ok/"+name, func(t *testing.T) {
			st, err := recepcion.DecodeCallback([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if st.Clave != "c" || st.Estado != recepcion.EstadoProcesando || st.FechaTime.IsZero() {
				t.Fatalf("%+v", st)
			}
		})
	}
	if _, err := recepcion.DecodeCallback([]byte(`{"clave":"c"}`)); err == nil {
		t.Fatal("an answer without ind-estado was accepted")
	}
	// A respuesta-xml in the callback spelling is read too.
	clave, _ := claveFor(1)
	ans := `<MensajeHacienda xmlns="https://tribunet.hacienda.go.cr/docs/esquemas/2017/v4.2/mensajeHacienda"><Clave>` + clave + `</Clave><Mensaje>3</Mensaje><DetalleMensaje>a
 b </DetalleMensaje><TotalFactura>10.5</TotalFactura></MensajeHacienda>`
	body, _ := json.Marshal(map[string]string{"clave": "c", "indEstado": "rechazado", "respuestaXml": b64(ans)})
	st, err := recepcion.DecodeCallback(body)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mensaje == nil || st.Mensaje.Accepted() || strings.Join(st.Mensaje.DetalleLines(), "|") != "a|b" || st.Mensaje.TotalFactura.String() != "10.5" {
		t.Fatalf("%+v", st.Mensaje)
	}
	// A respuesta-xml that is not XML is said to be no MensajeHacienda,
	// with the parser's reason, not an invalid signature.
	body, _ = json.Marshal(map[string]string{"clave": "c", "indEstado": "rechazado", "respuestaXml": b64("<MensajeHacienda")})
	_, err = recepcion.DecodeCallback(body)
	if !errors.Is(err, hacienda.ErrNotMensajeHacienda) || errors.Is(err, signer.ErrInvalidSignature) ||
		!strings.Contains(err.Error(), "parse document") || strings.Contains(err.Error(), signer.ErrInvalidSignature.Error()) {
		t.Fatalf("an answer that is not XML: %v", err)
	}
}
