package gateway

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"facturad/tenant"
	"facturad/tenant/storetest"
)

// BenchmarkWarmBranchList measures the server time of an authenticated
// request with a warm credential cache: GET of a company's branches, from
// routing to the encoded answer, on the real tenant.Service and SQLite
// store. Run it on one core:
//
//	go test -run '^$' -bench WarmBranchList -benchmem -cpu 1 ./gateway
//
// It fails if the slow password hash runs on the warm path.
func BenchmarkWarmBranchList(b *testing.B) {
	w := newWorld(b)
	benchWarm(b, w, w.srv)
}

// BenchmarkWarmBranchListPostgres is BenchmarkWarmBranchList on the
// PostgreSQL store (TEST_DATABASE_URL); the time includes waiting for the
// database server on the same machine.
func BenchmarkWarmBranchListPostgres(b *testing.B) {
	w := newWorldOn(b, storetest.NewPostgres(b))
	benchWarm(b, w, w.srv)
}

// storeless is the real service with Branches answered from memory, to
// tell the gateway's and authentication's share from the store query's.
type storeless struct {
	Tenants
	branches []tenant.Branch
}

func (s storeless) Branches(context.Context, tenant.Principal, int64) ([]tenant.Branch, error) {
	return s.branches, nil
}

// BenchmarkWarmAuthNoStore is BenchmarkWarmBranchList without the store
// query: request id, routing, warm authentication (real service and cache),
// metrics and the JSON answer.
func BenchmarkWarmAuthNoStore(b *testing.B) {
	w := newWorld(b)
	o := w.srv.o
	o.Tenants = storeless{Tenants: o.Tenants, branches: []tenant.Branch{{ID: 1, CompanyID: 1, Sucursal: "001", RazonComercial: "Sucursal Central", Activo: true}}}
	o.Registerer, o.Gatherer = nil, nil
	srv, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	benchWarm(b, w, srv)
}

// BenchmarkAccessLog is BenchmarkWarmAuthNoStore with the access log off
// (a logger above info), written to io.Discard for every request, and for
// a tenth of them: what one access line costs, its JSON encoding included.
//
//	go test -run '^$' -bench AccessLog -benchmem -cpu 1 ./gateway
func BenchmarkAccessLog(b *testing.B) {
	for _, bc := range []struct {
		name   string
		level  slog.Level
		sample float64
	}{
		{"off", slog.LevelWarn, 1},
		{"discard", slog.LevelInfo, 1},
		{"discard-sample-0.1", slog.LevelInfo, 0.1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := newWorld(b)
			o := w.srv.o
			o.Tenants = storeless{Tenants: o.Tenants, branches: []tenant.Branch{{ID: 1, CompanyID: 1, Sucursal: "001", RazonComercial: "Sucursal Central", Activo: true}}}
			o.Registerer, o.Gatherer = nil, nil
			o.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: bc.level}))
			o.AccessLogSample = bc.sample
			srv, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			benchWarm(b, w, srv)
		})
	}
}

func benchWarm(b *testing.B, w *world, srv *Server) {
	co := w.createCompany(b, w.admin, "3101123456", "Empresa de Medición S.A.")
	path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)

	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(path)
	req.Header.SetHost("facturad.test")
	req.Header.Set("AuthToken", co.user.token)
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(co.user.user+":"+co.user.pass)))
	req.Header.Set("accept", "text/plain")
	var rc fasthttp.RequestCtx
	rc.Init(&req, nil, nil)
	h := srv.api.Handler

	h(&rc) // the cold request: the slow hash runs once here
	if rc.Response.StatusCode() != 200 {
		b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	before := w.hasher.verifies.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rc.Response.Reset()
		rc.ResetUserValues()
		h(&rc)
	}
	b.StopTimer()
	if rc.Response.StatusCode() != 200 {
		b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	if n := w.hasher.verifies.Load() - before; n != 0 {
		b.Fatalf("%d slow hash checks on the warm path", n)
	}
}

// BenchmarkWarmBranchListRoundTrip is the same request through a client and
// an in-memory connection: HTTP parsing and writing on both sides included.
func BenchmarkWarmBranchListRoundTrip(b *testing.B) {
	w := newWorld(b)
	co := w.createCompany(b, w.admin, "3101123456", "Empresa de Medición S.A.")
	path := fmt.Sprintf("/api/companies/%d/branches/v4", co.id)
	if r := w.do(b, "GET", path, &co.user, "", nil); r.status != 200 {
		b.Fatalf("status %d: %s", r.status, r.body)
	}
	var req fasthttp.Request
	var resp fasthttp.Response
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI("http://facturad.test" + path)
	req.Header.Set("AuthToken", co.user.token)
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(co.user.user+":"+co.user.pass)))
	before := w.hasher.verifies.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := w.api.Do(&req, &resp); err != nil || resp.StatusCode() != 200 {
			b.Fatalf("%v %d", err, resp.StatusCode())
		}
	}
	b.StopTimer()
	if n := w.hasher.verifies.Load() - before; n != 0 {
		b.Fatalf("%d slow hash checks on the warm path", n)
	}
}

// BenchmarkAccessLine is the access line alone, JSON to io.Discard: the
// part of BenchmarkAccessLog/discard that the noise of a shared machine
// hides.
func BenchmarkAccessLine(b *testing.B) {
	srv := &Server{
		o:   Options{AccessLogSample: 1},
		log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	var rc fasthttp.RequestCtx
	rc.Response.SetBodyString(`[{"id":1,"sucursal":"001"}]`)
	p := tenant.Principal{Username: "branch-user", CompanyID: 12, BranchID: 34}
	b.ReportAllocs()
	for b.Loop() {
		srv.access(&rc, "GET", "/api/companies/{companyId}/branches/v4", "4f2a9c1b7d3e-1a", p, 1234567)
	}
}
