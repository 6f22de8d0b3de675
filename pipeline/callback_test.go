package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/tenant"
)

// TestCallback: a callback with the document's token asks the tax
// authority once and stores its verdict; one for a settled document asks
// nothing; a wrong token or an unknown clave is ErrBadCallback and asks
// nothing. The submission carries the callback URL.
func TestCallback(t *testing.T) {
	b := setup(t, setupOptions{pipeline: func(o *Options) {
		o.CallbackBase = "https://facturas.example.cr/"
		o.CallbackKey = []byte(strings.Repeat("k", 32))
	}})
	ctx := context.Background()
	out := b.mustSend(t, request("01", "callback"))
	clave := out.Document.Clave
	token := b.p.callbackToken(clave)
	if rec, ok := b.sb.Document(clave); !ok || rec.CallbackURL != "https://facturas.example.cr/hacienda/callback/"+clave+"/"+token {
		t.Fatalf("submitted callbackUrl %q", rec.CallbackURL)
	}
	if d := b.stored(t, clave); d.NextAttemptAt.Sub(d.SubmittedAt) < b.p.o.SafetyPoll/2 {
		t.Errorf("first poll %v after the submission, want at least half of SafetyPoll %v", d.NextAttemptAt.Sub(d.SubmittedAt), b.p.o.SafetyPoll)
	}
	metric := func(outcome string) float64 { return testutil.ToFloat64(b.p.metrics.callback.WithLabelValues(outcome)) }

	before := b.sub.statuses.Load()
	for _, bad := range []struct{ clave, token string }{
		{clave, token[:len(token)-1] + "x"},
		{clave, ""},
		{strings.Repeat("5", 50), token},
		{"not-a-clave", token},
	} {
		if err := b.p.Callback(ctx, bad.clave, bad.token); !errors.Is(err, ErrBadCallback) {
			t.Errorf("callback %.12s…/%.8s…: %v, want ErrBadCallback", bad.clave, bad.token, err)
		}
	}
	if got := b.sub.statuses.Load() - before; got != 0 || metric("refused") != 4 {
		t.Fatalf("refused callbacks asked %d times, counted %v", got, metric("refused"))
	}

	if err := b.p.Callback(ctx, clave, token); err != nil {
		t.Fatal(err)
	}
	if got := b.sub.statuses.Load() - before; got != 1 || metric("asked") != 1 {
		t.Fatalf("a callback asked %d times, counted %v; want once", got, metric("asked"))
	}
	if d := b.stored(t, clave); d.Estado != tenant.StateAccepted {
		t.Fatalf("after the callback: %s", d.Estado)
	}
	if err := b.p.Callback(ctx, clave, token); err != nil {
		t.Fatal(err)
	}
	if got := b.sub.statuses.Load() - before; got != 1 || metric("settled") != 1 {
		t.Fatalf("a callback for a settled document asked (%d status calls in all), counted %v", got, metric("settled"))
	}
}
