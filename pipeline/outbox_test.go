package pipeline

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// TestOutboxEvents: the real pipeline's saves write an event for each
// change of estado of a document (05 stored signed, 04 received, 01
// accepted), with the read answer of that moment, and the accepted
// document's e-mail to the receptor's address when e-mail is on; with it
// off, none.
func TestOutboxEvents(t *testing.T) {
	for _, k := range storeKinds {
		for _, email := range []bool{true, false} {
			name := k.name + "/email off"
			if email {
				name = k.name + "/email on"
			}
			t.Run(name, func(t *testing.T) {
				b := setup(t, setupOptions{store: k.open, pipeline: func(o *Options) { o.Email = email }})
				ctx := context.Background()
				ws := b.store.(interface {
					tenant.WebhookStore
					tenant.EmailStore
				})
				w := tenant.Webhook{CompanyID: b.company.ID, URL: "https://hooks.example/x", Eventos: tenant.EventNames(), SealedSecret: []byte("s")}
				if err := ws.CreateWebhook(ctx, &w, 10); err != nil {
					t.Fatal(err)
				}
				out := b.mustSend(t, request("01", "outbox-1"))
				clave := out.Document.Clave
				b.runDueUntil(t, 20, func() bool { return b.stored(t, clave).Estado == tenant.StateAccepted })
				log, err := ws.Deliveries(ctx, w.ID, tenant.DeliveryPage{Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				var names, ids []string
				for i := len(log) - 1; i >= 0; i-- { // oldest first
					d := log[i]
					names = append(names, d.Evento)
					ids = append(ids, d.EventID)
					var data struct {
						Clave, Estado string
						MensajeAPI    string `json:"mensaje_api"`
					}
					if err := json.Unmarshal(d.Payload, &data); err != nil || data.Clave != clave || d.Clave != clave ||
						"documento."+tenant.EventState(tenant.State(data.Estado)) != d.Evento {
						t.Errorf("delivery %s: payload %s (%v)", d.Evento, d.Payload, err)
					}
				}
				if want := []string{"documento.no_enviado", "documento.enviado", "documento.aceptado"}; !slices.Equal(names, want) {
					t.Fatalf("events %v, want %v", names, want)
				}
				if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 3 {
					t.Fatalf("event ids %v are not distinct", ids)
				}
				es, err := ws.DocumentEmails(ctx, b.stored(t, clave).ID)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case email && (len(es) != 1 || !slices.Equal(es[0].Recipients, []string{"cliente@example.com"})):
					t.Fatalf("e-mails %+v", es)
				case !email && len(es) != 0:
					t.Fatalf("e-mail written with e-mail off: %+v", es)
				}
				// A check that finds nothing new writes nothing.
				if _, err := b.p.Check(ctx, b.branch, clave); err != nil {
					t.Fatal(err)
				}
				again, _ := ws.Deliveries(ctx, w.ID, tenant.DeliveryPage{Limit: 100})
				if len(again) != 3 {
					t.Fatalf("%d deliveries after a check that changed nothing", len(again))
				}
			})
		}
	}
}

// TestOutboxEmailOfACallbackVerdict: a document accepted by the tax
// authority's callback, which reads the document's state alone, still has
// its e-mail written with the receptor's address from the stored request,
// on both stores.
func TestOutboxEmailOfACallbackVerdict(t *testing.T) {
	trusted, roots := trustedAnswerSigner(t)
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			b := setup(t, setupOptions{store: k.open, sandbox: sandbox.Options{AnswerSigner: trusted}, pipeline: func(o *Options) {
				o.Email = true
				withCallbacks(o)
				o.AnswerRoots = roots
			}})
			ctx := context.Background()
			clave := b.mustSend(t, request("01", "callback-email")).Document.Clave
			st := acceptedStatus(t, b, clave)
			if err := b.p.Callback(ctx, clave, b.p.callbackToken(clave), callbackBody(t, st)); err != nil {
				t.Fatal(err)
			}
			if got := testutil.ToFloat64(b.p.metrics.callback.WithLabelValues("applied")); got != 1 {
				t.Fatalf("callbacks applied: %v, want 1 (the verdict was not the callback's)", got)
			}
			d := b.stored(t, clave)
			if d.Estado != tenant.StateAccepted {
				t.Fatalf("stored %s, want 01", d.Estado)
			}
			es, err := b.store.(tenant.EmailStore).DocumentEmails(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 1 || !slices.Equal(es[0].Recipients, []string{"cliente@example.com"}) {
				t.Fatalf("e-mails %+v, want one to cliente@example.com", es)
			}
		})
	}
}
