package recepcion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

// between fails unless lo <= d <= hi: timing is asserted with windows.
func between(t *testing.T, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Fatalf("took %v, want between %v and %v", d, lo, hi)
	}
}

func TestFaultLatency(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(1)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil { // warm the token
		t.Fatal(err)
	}
	if err := b.sb.SetFaults(sandbox.Faults{Latency: sandbox.Duration(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := b.client.Status(ctx, creds, clave); err != nil {
		t.Fatal(err)
	}
	between(t, time.Since(start), 300*time.Millisecond, 2*time.Second)
}

func TestFaultErrorRates(t *testing.T) {
	for _, tc := range []struct {
		code       int
		retryAfter time.Duration
	}{
		{500, 0},
		{503, 2 * time.Second},
		{429, 2 * time.Second},
		{502, 0},
		{400, 0},
	} {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{
				ErrorRates: map[int]float64{tc.code: 1}, RetryAfter: sandbox.Duration(2 * time.Second),
			}}, recepcion.Options{})
			clave, xml := unsignedDoc(2)
			_, err := b.client.Submit(context.Background(), creds, submission(clave, xml))
			var ae *recepcion.APIError
			if !errors.As(err, &ae) || ae.Status != tc.code {
				t.Fatalf("%#v", err)
			}
			if ae.Retryable != wantRetryable(tc.code) || ae.RetryAfter != tc.retryAfter || ae.Cause == "" {
				t.Fatalf("%+v", ae)
			}
			if _, ok := b.sb.Document(clave); ok {
				t.Fatal("an injected error recorded the document")
			}
		})
	}
}

func TestFaultDropReset(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{DropRate: 1}}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := unsignedDoc(3)
	_, err := b.client.Submit(ctx, creds, submission(clave, xml))
	var te *recepcion.TransportError
	if !errors.As(err, &te) || !te.Retryable || !te.MaybeReceived {
		t.Fatalf("%#v, want a retryable failure that may have been received", err)
	}
	if _, ok := b.sb.Document(clave); !ok {
		t.Fatal("the dropped document was not recorded")
	}
	// What the caller must do: ask first. The tax authority has it.
	if err := b.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("status: %v %v", st.Estado, err)
	}
	// Submitting blindly again is refused as a duplicate.
	_, err = b.client.Submit(ctx, creds, submission(clave, xml))
	var ae *recepcion.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Retryable {
		t.Fatalf("%#v", err)
	}
}

func TestFaultDropHang(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{DropRate: 1, DropMode: sandbox.DropHang}},
		recepcion.Options{Timeout: 300 * time.Millisecond})
	clave, xml := unsignedDoc(4)
	start := time.Now()
	_, err := b.client.Submit(context.Background(), creds, submission(clave, xml))
	between(t, time.Since(start), 300*time.Millisecond, 3*time.Second)
	var te *recepcion.TransportError
	if !errors.As(err, &te) || te.Kind != recepcion.KindTimeout || !te.Retryable || !te.MaybeReceived {
		t.Fatalf("%#v, want a timeout after the request was written", err)
	}
	if _, ok := b.sb.Document(clave); !ok {
		t.Fatal("the document was not recorded")
	}
}

func TestFaultTokenRefusal(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{TokenRefusal: 503}}, recepcion.Options{})
	clave, xml := unsignedDoc(5)
	_, err := b.client.Submit(context.Background(), creds, submission(clave, xml))
	var ae *recepcion.APIError
	if !errors.As(err, &ae) || ae.Op != recepcion.OpToken || ae.Status != 503 || !ae.Retryable || ae.MaybeReceived {
		t.Fatalf("%#v", err)
	}
	if err := b.sb.SetFaults(sandbox.Faults{TokenRefusal: 401}); err != nil {
		t.Fatal(err)
	}
	_, err = b.client.Submit(context.Background(), creds, submission(clave, xml))
	if !errors.Is(err, recepcion.ErrCredentials) || retryable(err) {
		t.Fatalf("%v", err)
	}
	if s := b.sb.Stats(); s.Submissions != 0 || s.TokenRefused != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestFaultStuck(t *testing.T) {
	clave, xml := unsignedDoc(6)
	other, otherXML := unsignedDoc(7)
	b := setup(t, sandbox.Options{Checks: noChecks, ProcessingDelay: time.Second, Faults: sandbox.Faults{StuckClaves: []string{clave}}}, recepcion.Options{})
	ctx := context.Background()
	for _, s := range []recepcion.Submission{submission(clave, xml), submission(other, otherXML)} {
		if _, err := b.client.Submit(ctx, creds, s); err != nil {
			t.Fatal(err)
		}
	}
	b.clock.Advance(240 * time.Hour)
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil || st.Estado != recepcion.EstadoProcesando || st.ResponseXML != nil {
		t.Fatalf("stuck clave: %v %v", st.Estado, err)
	}
	st, err = b.client.Status(ctx, creds, other)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("other clave: %v %v", st.Estado, err)
	}
}

func TestFaultOutage(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks, Faults: sandbox.Faults{Outage: true}}, recepcion.Options{Timeout: 2 * time.Second})
	ctx := context.Background()
	clave, xml := unsignedDoc(8)
	start := time.Now()
	_, err := b.client.Submit(ctx, creds, submission(clave, xml))
	between(t, time.Since(start), 0, 2*time.Second)
	var te *recepcion.TransportError
	if !errors.As(err, &te) || !te.Retryable || (te.Kind != recepcion.KindReset && te.Kind != recepcion.KindCutOff) {
		t.Fatalf("%#v", err)
	}
	if err := b.sb.SetFaults(sandbox.Faults{Outage: true, OutageStatus: 503}); err != nil {
		t.Fatal(err)
	}
	_, err = b.client.Submit(ctx, creds, submission(clave, xml))
	var ae *recepcion.APIError
	if !errors.As(err, &ae) || ae.Status != 503 || !ae.Retryable {
		t.Fatalf("%#v", err)
	}
	if s := b.sb.Stats(); s.Submissions != 0 || s.OutageCuts != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestFaultsAtRunTime sets the faults through the admin endpoint, as a
// load test or another service would.
func TestFaultsAtRunTime(t *testing.T) {
	b := setup(t, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	put := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, b.sb.URL+"/_sandbox/faults", bytes.NewBufferString(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("PUT faults: %d", resp.StatusCode)
		}
	}
	put(`{"errorRates": {"503": 1}, "retryAfter": "4s"}`)
	clave, xml := unsignedDoc(9)
	_, err := b.client.Submit(ctx, creds, submission(clave, xml))
	if recepcion.Judge(err).RetryAfter != 4*time.Second || !retryable(err) {
		t.Fatalf("%v", err)
	}
	resp, err := http.Get(b.sb.URL + "/_sandbox/faults")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if got["retryAfter"] != "4s" || got["errorRates"].(map[string]any)["503"] != 1.0 {
		t.Fatalf("GET faults = %v", got)
	}
	put(`{"rejectClaves": "0000000009", "rejectDetail": ["Total incorrecto"]}`)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil || st.Estado != recepcion.EstadoRechazado || !strings.HasSuffix(st.Mensaje.DetalleMensaje, "Total incorrecto\n") {
		t.Fatalf("%v %+v", err, st.Mensaje)
	}
}
