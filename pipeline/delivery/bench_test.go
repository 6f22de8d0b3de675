package delivery_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/gateway/client"
	"facturad/pipeline/delivery"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// BenchmarkWebhookDeliveries: b.N events of 8 companies, each with one
// webhook on a local HTTP endpoint that verifies every signature, delivered
// by one deliverer with the default workers and per-webhook limit; the
// figure is deliveries per second from the outbox to the endpoint and
// back into the store.
func BenchmarkWebhookDeliveries(b *testing.B) {
	for _, k := range []struct {
		name string
		open func(testing.TB) store
	}{
		{"sqlite", func(tb testing.TB) store { return storetest.NewSQLiteStore(tb) }},
		{"postgres", func(tb testing.TB) store { return storetest.NewPostgresStore(tb) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			if k.name == "postgres" && os.Getenv(storetest.EnvDatabaseURL) == "" {
				b.Skip("no " + storetest.EnvDatabaseURL)
			}
			benchDeliveries(b, k.open(b))
		})
	}
}

func benchDeliveries(b *testing.B, s store) {
	f := newFixture(b, s)
	var got atomic.Int64
	secrets := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if client.VerifyWebhook(secrets[req.URL.Path], req.Header.Get(delivery.SignatureHeader), body, time.Now(), client.WebhookTolerance) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	const companies = 8
	var branches []tenant.Branch
	for i := range companies {
		c, br := f.company(b, fmt.Sprintf("Bench %d S.A.", i))
		path := fmt.Sprintf("/hooks/%d", i)
		_, secrets[path] = f.webhook(b, c.ID, srv.URL+path, "documento.aceptado")
		branches = append(branches, br)
	}
	for i := range b.N {
		f.event(b, branches[i%companies], tenant.StateAccepted, nil)
	}
	d, err := delivery.New(delivery.Options{
		Store: f.s, Secrets: f.svc, Holder: "bench", Policy: delivery.URLPolicy{AllowHTTP: true, AllowPrivate: true},
		PollInterval: 5 * time.Millisecond, Logger: quiet, Registerer: prometheus.NewRegistry(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	if err := d.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		b.Fatal(err)
	}
}
