package pipeline

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// TestCallback: a callback with the document's token asks the tax
// authority once and stores its verdict; one for a settled document asks
// nothing; a wrong token or an unknown clave is ErrBadCallback and asks
// nothing. The submission carries the callback URL.
func TestCallback(t *testing.T) {
	b := setup(t, setupOptions{pipeline: withCallbacks})
	ctx := context.Background()
	out := b.mustSend(t, request("01", "callback"))
	clave := out.Document.Clave
	token := b.p.callbackToken(clave)
	if rec, ok := b.sb.Document(clave); !ok || rec.CallbackURL != "https://facturas.example.cr/hacienda/callback/"+clave+"/"+token {
		t.Fatalf("submitted callbackUrl %q", rec.CallbackURL)
	}
	if d := b.stored(t, clave); !callbackLate(b.p, d.NextAttemptAt.Sub(d.SubmittedAt)) {
		t.Errorf("first poll %v after the submission, want two thirds to all of CallbackWait %v", d.NextAttemptAt.Sub(d.SubmittedAt), b.p.o.CallbackWait)
	}
	metric := func(outcome string) float64 { return testutil.ToFloat64(b.p.metrics.callback.WithLabelValues(outcome)) }

	before := b.sub.statuses.Load()
	for _, bad := range []struct{ clave, token string }{
		{clave, token[:len(token)-1] + "x"},
		{clave, ""},
		{strings.Repeat("5", 50), token},
		{"not-a-clave", token},
	} {
		if err := b.p.Callback(ctx, bad.clave, bad.token, nil); !errors.Is(err, ErrBadCallback) {
			t.Errorf("callback %.12s…/%.8s…: %v, want ErrBadCallback", bad.clave, bad.token, err)
		}
	}
	if got := b.sub.statuses.Load() - before; got != 0 || metric("refused") != 4 {
		t.Fatalf("refused callbacks asked %d times, counted %v", got, metric("refused"))
	}

	if err := b.p.Callback(ctx, clave, token, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.sub.statuses.Load() - before; got != 1 || metric("asked") != 1 {
		t.Fatalf("a callback asked %d times, counted %v; want once", got, metric("asked"))
	}
	if d := b.stored(t, clave); d.Estado != tenant.StateAccepted {
		t.Fatalf("after the callback: %s", d.Estado)
	}
	if err := b.p.Callback(ctx, clave, token, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.sub.statuses.Load() - before; got != 1 || metric("settled") != 1 {
		t.Fatalf("a callback for a settled document asked (%d status calls in all), counted %v", got, metric("settled"))
	}
}

// callbackBody is the JSON the tax authority posts to a callbackUrl for
// st, with its answer as given.
func callbackBody(t *testing.T, st recepcion.Status) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"clave": st.Clave, "fecha": st.Fecha, "ind-estado": string(st.Estado),
		"respuesta-xml": base64.StdEncoding.EncodeToString(st.ResponseXML),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// acceptedStatus is the tax authority's answer about clave, accepted, as
// its callback would carry it.
func acceptedStatus(t *testing.T, b *bundle, clave string) recepcion.Status {
	t.Helper()
	ctx := context.Background()
	creds, err := b.p.credentials(ctx, b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.client.Status(ctx, creds, clave)
	if err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("status: %+v, %v", st.Estado, err)
	}
	return st
}

// TestCallbackSignedVerdict: a callback whose body carries the tax
// authority's signed verdict, verified against the trusted roots, is
// stored without a status call; a verdict signed by an untrusted key, a
// body that is not final, or any body when no roots are configured makes
// the service ask instead, and a forged body changes nothing by itself.
func TestCallbackSignedVerdict(t *testing.T) {
	trusted, roots := trustedAnswerSigner(t)
	forger, _ := trustedAnswerSigner(t)
	tests := []struct {
		name    string
		roots   *x509.CertPool
		body    func(t *testing.T, st recepcion.Status) []byte
		outcome string // of the callback metric
		asks    int64  // status calls the callback made
	}{
		{"applied/genuine signed verdict", roots, callbackBody, "applied", 0},
		{"asked/signed by an untrusted key", roots, func(t *testing.T, st recepcion.Status) []byte {
			m, err := hacienda.ParseMensajeHacienda(st.ResponseXML)
			if err != nil {
				t.Fatal(err)
			}
			m.Namespace = ""
			m.Mensaje, m.EstadoMensaje = hacienda.MensajeRechazado, "Rechazado"
			unsigned, err := hacienda.MarshalMensajeHacienda(m)
			if err != nil {
				t.Fatal(err)
			}
			if st.ResponseXML, err = forger.SignAnswer(unsigned); err != nil {
				t.Fatal(err)
			}
			st.Estado = recepcion.EstadoRechazado
			return callbackBody(t, st)
		}, "asked", 1},
		{"asked/not final", roots, func(t *testing.T, st recepcion.Status) []byte {
			st.Estado, st.ResponseXML = "procesando", nil
			return callbackBody(t, st)
		}, "asked", 1},
		{"asked/no trusted roots", nil, callbackBody, "asked", 1},
		{"asked/empty body", roots, func(*testing.T, recepcion.Status) []byte { return nil }, "asked", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, setupOptions{
				sandbox: sandbox.Options{AnswerSigner: trusted},
				pipeline: func(o *Options) {
					withCallbacks(o)
					o.AnswerRoots = tt.roots
				},
			})
			ctx := context.Background()
			clave := b.mustSend(t, request("01", "signed-callback")).Document.Clave
			// The tax authority's answer, fetched as the callback would
			// carry it.
			st := acceptedStatus(t, b, clave)
			before := b.sub.statuses.Load()
			if err := b.p.Callback(ctx, clave, b.p.callbackToken(clave), tt.body(t, st)); err != nil {
				t.Fatal(err)
			}
			if got := b.sub.statuses.Load() - before; got != tt.asks {
				t.Errorf("the callback made %d status calls, want %d", got, tt.asks)
			}
			if got := testutil.ToFloat64(b.p.metrics.callback.WithLabelValues(tt.outcome)); got != 1 {
				t.Errorf("callbacks %s: %v, want 1", tt.outcome, got)
			}
			// Whichever way, the stored verdict is the tax authority's
			// genuine one, with its signed answer.
			if d := b.stored(t, clave); d.Estado != tenant.StateAccepted || len(d.ResponseXML) == 0 {
				t.Errorf("stored %s with %d bytes of answer, want 01 with the signed answer", d.Estado, len(d.ResponseXML))
			}
		})
	}
}

// withCallbacks turns callbacks on in o, to the tests' public URL with a
// fixed key.
func withCallbacks(o *Options) {
	o.CallbackBase = "https://facturas.example.cr/"
	o.CallbackKey = []byte(strings.Repeat("k", 32))
}

// trustedAnswerSigner makes a tax-authority answer signer of its own and
// the roots that trust it.
func trustedAnswerSigner(t testing.TB) (*sandbox.CertificateSigner, *x509.CertPool) {
	t.Helper()
	signer, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(signer.Root())
	return signer, roots
}

// racingStore stores another version of a document just before the first
// save of a final verdict, as the send storing its submission does when the
// callback comes at once, and counts the whole-document reads meanwhile.
type racingStore struct {
	fullStore
	raced     atomic.Bool
	fullReads atomic.Int64
}

func (s *racingStore) SaveDocument(ctx context.Context, d *tenant.Document) error {
	if d.Estado.Final() && s.raced.CompareAndSwap(false, true) {
		other, err := s.fullStore.DocumentStateByClave(ctx, d.Clave)
		if err != nil {
			return err
		}
		if err := s.fullStore.SaveDocument(ctx, &other); err != nil {
			return err
		}
	}
	return s.fullStore.SaveDocument(ctx, d)
}

func (s *racingStore) DocumentByClave(ctx context.Context, clave string) (tenant.Document, error) {
	s.fullReads.Add(1)
	return s.fullStore.DocumentByClave(ctx, clave)
}

// TestCallbackSignedVerdictRaced: a signed verdict whose save finds the
// document stored again since it was read is applied to the fresh state,
// read without the document's XML (as the callback's first read), and the
// stored signed XML and request are kept.
func TestCallbackSignedVerdictRaced(t *testing.T) {
	trusted, roots := trustedAnswerSigner(t)
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			var rs *racingStore
			b := setup(t, setupOptions{
				store: func(t testing.TB) fullStore {
					rs = &racingStore{fullStore: k.open(t)}
					return rs
				},
				sandbox: sandbox.Options{AnswerSigner: trusted},
				pipeline: func(o *Options) {
					withCallbacks(o)
					o.AnswerRoots = roots
				},
			})
			ctx := context.Background()
			clave := b.mustSend(t, request("01", "raced-callback")).Document.Clave
			before := b.stored(t, clave)
			st := acceptedStatus(t, b, clave)
			reads := rs.fullReads.Load()
			if err := b.p.Callback(ctx, clave, b.p.callbackToken(clave), callbackBody(t, st)); err != nil {
				t.Fatal(err)
			}
			if !rs.raced.Load() {
				t.Fatal("the verdict's save was not raced")
			}
			if got := rs.fullReads.Load() - reads; got != 0 {
				t.Errorf("the callback read the whole document %d times, want none", got)
			}
			if got := testutil.ToFloat64(b.p.metrics.callback.WithLabelValues("applied")); got != 1 {
				t.Errorf("callbacks applied: %v, want 1", got)
			}
			d := b.stored(t, clave)
			if d.Estado != tenant.StateAccepted || len(d.ResponseXML) == 0 {
				t.Errorf("stored %s with %d bytes of answer, want 01 with the signed answer", d.Estado, len(d.ResponseXML))
			}
			if !bytes.Equal(d.SignedXML, before.SignedXML) || len(d.SignedXML) == 0 || !bytes.Equal(d.Request, before.Request) {
				t.Error("the signed XML or the request changed with the verdict")
			}
		})
	}
}

// callbackLate reports whether d, the wait between a submission with
// callbacks on and its first poll, is the lost-callback window: two thirds
// to all of CallbackWait.
func callbackLate(p *Pipeline, d time.Duration) bool {
	return d >= p.o.CallbackWait-p.o.CallbackWait/3 && d <= p.o.CallbackWait
}

// TestLostCallbackPolled: with callbacks on and the callback lost, a
// document is not asked about before its callback is late, and once it is
// (CallbackWait), it is asked about exactly once although two replicas
// look for due documents at the same moment (the store's claim leases
// it), and settles. A document the tax authority leaves procesando is
// asked again with backoff from CallbackWait, not at once nor only after
// the safety net.
func TestLostCallbackPolled(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{
				store:    k.open,
				sandbox:  sandbox.Options{Faults: sandbox.Faults{CallbackDropRate: 1}},
				pipeline: withCallbacks,
			})
			ctx := context.Background()
			// A second replica on the same store, looking for due
			// documents alongside the first.
			o := b.p.o
			o.Registerer = prometheus.NewRegistry()
			other, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := other.StopAndCancel(sctx); err != nil {
					t.Errorf("stop the second replica: %v", err)
				}
			})
			both := func() int {
				var claimed [2]int
				var wg sync.WaitGroup
				for i, p := range []*Pipeline{b.p, other} {
					wg.Go(func() {
						n, err := p.RunDue(ctx)
						if err != nil {
							t.Errorf("RunDue: %v", err)
						}
						claimed[i] = n
					})
				}
				wg.Wait()
				return claimed[0] + claimed[1]
			}

			clave := b.mustSend(t, request("01", "lost-callback")).Document.Clave
			if d := b.stored(t, clave); d.Estado != tenant.StateSent {
				t.Fatalf("sent: %s, want 04", d.Estado)
			}
			before := b.sub.statuses.Load()
			b.clock.advance(o.CallbackWait*2/3 - time.Second)
			if n := both(); n != 0 || b.sub.statuses.Load() != before {
				t.Fatalf("before the callback is late: %d claimed, %d status calls", n, b.sub.statuses.Load()-before)
			}
			b.clock.advance(o.CallbackWait/3 + 2*time.Second)
			if n := both(); n != 1 {
				t.Fatalf("the late document was claimed %d times by two replicas, want once", n)
			}
			if got := b.sub.statuses.Load() - before; got != 1 {
				t.Errorf("%d status calls for one late document, want 1", got)
			}
			if d := b.stored(t, clave); d.Estado != tenant.StateAccepted || len(d.ResponseXML) == 0 {
				t.Fatalf("after the poll: %s with %d bytes of answer, want 01 with the signed answer", d.Estado, len(d.ResponseXML))
			}
			if st := b.sb.Stats(); st.CallbacksDropped < 1 || st.Callbacks != 0 {
				t.Errorf("sandbox: %d callbacks dropped, %d posted; want it lost", st.CallbacksDropped, st.Callbacks)
			}

			// Still procesando when asked: asked again with backoff.
			if err := b.sb.SetFaults(sandbox.Faults{CallbackDropRate: 1, StuckRate: 1}); err != nil {
				t.Fatal(err)
			}
			stuck := b.mustSend(t, request("01", "stuck-lost-callback")).Document.Clave
			b.clock.advance(o.CallbackWait + time.Second)
			if n := both(); n != 1 {
				t.Fatalf("the stuck document was claimed %d times, want once", n)
			}
			d := b.stored(t, stuck)
			if d.Estado != tenant.StateSent {
				t.Fatalf("stuck document: %s, want 04", d.Estado)
			}
			if next := d.NextAttemptAt.Sub(b.clock.now()); next < o.CallbackWait-time.Second || next > 2*o.CallbackWait {
				t.Errorf("next ask %v after a procesando answer, want CallbackWait %v to twice that", next, o.CallbackWait)
			}
		})
	}
}
