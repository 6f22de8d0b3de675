package delivery_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
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
	"facturad/signer/benchcpu"
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
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), benchcpu.ProcessCPU(b)
	if err := d.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	// A delivery that never arrives (signatures that stop verifying, a
	// failing store) ends the benchmark instead of holding it for ever.
	for last, since := int64(0), time.Now(); got.Load() < int64(b.N); time.Sleep(time.Millisecond) {
		if n := got.Load(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 30*time.Second {
			b.Fatalf("%d of %d deliveries arrived, none in the last 30 s", n, b.N)
		}
	}
	elapsed, cpu := time.Since(start), benchcpu.ProcessCPU(b)-cpu0
	b.StopTimer()
	// The process's CPU (deliverer, endpoint and, for SQLite, the store)
	// per delivery, against one raw RSA signature measured just after.
	perDelivery := cpu / time.Duration(b.N)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(perDelivery.Microseconds()), "cpu-µs/delivery")
	b.ReportMetric(float64(perDelivery)/float64(benchcpu.RawRSA(b, key, 50)), "x-raw-rsa")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		b.Fatal(err)
	}
}
