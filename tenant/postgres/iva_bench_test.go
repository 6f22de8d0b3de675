package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"facturad/tenant"
	"facturad/tenant/certopen"
	"facturad/tenant/seal"
)

// BenchmarkIVASummary times the IVA summary of one company's month (A.15)
// over the listing benchmark's documents (FACTURAD_LIST_BENCH_ROWS, a
// million by default; the first company holds 60% of them, about 50,000
// accepted a month), each with a two-cell breakdown as issuance keeps it:
// the summary reads a month's range of documents_iva_month and adds the
// breakdowns up, never an XML.
//
//	go test ./tenant/postgres -run '^$' -bench IVASummary -benchtime 10x
func BenchmarkIVASummary(b *testing.B) {
	ctx := context.Background()
	s, companies, _, raw := seedListBench(b, qSeedListBench, "documents")
	bd, err := json.Marshal(tenant.IVABreakdown{Cells: []tenant.IVACell{
		{Codigo: "01", CodigoTarifaIVA: "08", Tarifa: "13", Base: decimal.RequireFromString("8849.55752"), Impuesto: decimal.RequireFromString("1150.44248")},
		{Codigo: "01", CodigoTarifaIVA: "10", Tarifa: "0", Exento: decimal.RequireFromString("500")},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := raw.Exec(ctx, `INSERT INTO document_iva (document_id, breakdown) SELECT id, $1 FROM documents`, string(bd)); err != nil {
		b.Fatal(err)
	}
	key := make([]byte, seal.KeySize)
	rand.Read(key)
	sealer, err := seal.New(key)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := tenant.NewService(tenant.ServiceOptions{Store: s, Sealer: sealer, Certificates: certopen.Opener{},
		DefaultAmbiente: tenant.AmbientePruebas})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.AdoptEnvironment(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := raw.Exec(ctx, "VACUUM ANALYZE documents, document_iva"); err != nil {
		b.Fatal(err)
	}
	admin := tenant.Principal{UserID: 1, Username: "admin", Role: tenant.RoleAdmin}
	var docs int64
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		sum, err := svc.IVASummary(ctx, admin, companies[0], "2025-06")
		if err != nil {
			b.Fatal(err)
		}
		docs = sum.TotalVentas.Documentos
	}
	b.StopTimer()
	if docs == 0 {
		b.Fatal("the month summed no document")
	}
	b.ReportMetric(float64(docs), "docs/summary")
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(docs), "ns/doc")
}
