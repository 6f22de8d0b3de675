package pipeline_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/gateway"
	"facturad/hacienda/recepcion"
	"facturad/pipeline"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// Example_wiring shows how the service puts the pipeline together: the
// store, the tenant service (issuer data, credentials, authorization, and
// the signer cache's certificate source), the signer cache, the
// tax-authority client, and the gateway's document routes.
func Example_wiring() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	registry := prometheus.NewRegistry()

	store, err := sqlite.Open(ctx, "data/facturad.db", sqlite.Options{})
	if err != nil {
		panic(err)
	}
	masterKey := make([]byte, 32) // from configuration
	sealer, err := seal.New(masterKey)
	if err != nil {
		panic(err)
	}
	tenants, err := tenant.NewService(tenant.ServiceOptions{Store: store, Sealer: sealer, Certificates: certopen.Opener{}})
	if err != nil {
		panic(err)
	}
	certs, err := signer.NewCache(signer.CacheOptions{Source: tenants})
	if err != nil {
		panic(err)
	}
	client, err := recepcion.New(recepcion.Options{
		APIURL:   "http://127.0.0.1:8081/recepcion-sandbox/v1",
		TokenURL: "http://127.0.0.1:8081/auth/realms/rut-stag/protocol/openid-connect/token",
		Logger:   logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}
	p, err := pipeline.New(pipeline.Options{
		Store: store, Issuers: tenants, Signer: certs, Submitter: client,
		Logger: logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}
	if err := p.Start(ctx); err != nil {
		panic(err)
	}
	srv, err := gateway.New(gateway.Options{
		Tenants: tenants, Routes: gateway.DocumentRoutes(p), Logger: logger, Registerer: registry,
	})
	if err != nil {
		panic(err)
	}

	// Shutdown, in reverse order: the gateway stops taking requests, then
	// the pipeline finishes what it admitted (or is cut after a grace
	// period), then the store closes.
	shut, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	if err := p.Stop(shut); err != nil {
		_ = p.StopAndCancel(context.Background())
	}
	_ = store.Close()
}
