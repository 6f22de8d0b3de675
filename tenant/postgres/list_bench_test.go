package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"facturad/tenant/postgres"
	"facturad/tenant/storetest"
)

// qSeedListBench inserts documents $1..$2 as storetest's listing benchmark
// describes them; $3 are the companies, $4 the branches, $5 the first issue
// time. No signed XML: a listing never reads it.
const qSeedListBench = `INSERT INTO documents (company_id, branch_id, id_externo, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado, phase, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, last_error, attempts, created_at, updated_at)
SELECT c.company_id, c.branch_id, 'pedido-' || g,
    CASE WHEN (g + g / 10) % 20 < 14 THEN '01' WHEN (g + g / 10) % 20 < 17 THEN '04'
         WHEN (g + g / 10) % 20 < 19 THEN '03' ELSE '08' END,
    '00001', g, lpad(g::text, 20, '0'), '506' || lpad(g::text, 47, '0'), '1',
    $5::timestamptz + make_interval(secs => g * 30 + (g * 7919) % 600),
    '02', '3101000000', '01', (100000000 + (31 * g) % 5000)::text,
    CASE WHEN (g / 10) % 100 < 92 THEN '01' WHEN (g / 10) % 100 < 96 THEN '04'
         WHEN (g / 10) % 100 < 98 THEN '02' WHEN (g / 10) % 100 < 99 THEN '05' ELSE '03' END,
    CASE WHEN (g / 10) % 100 < 92 THEN 'accepted' WHEN (g / 10) % 100 < 96 THEN 'submitted'
         WHEN (g / 10) % 100 < 98 THEN 'rejected' WHEN (g / 10) % 100 < 99 THEN 'retrying' ELSE 'failed' END,
    'aceptado', '1', 'Aceptado', '{}', '', 1,
    $5::timestamptz + make_interval(secs => g * 30), $5::timestamptz + make_interval(secs => g * 30)
FROM generate_series($1::bigint, $2::bigint) AS g
CROSS JOIN LATERAL (SELECT
    ($3::bigint[])[ci + 1] AS company_id,
    ($4::bigint[])[ci * 3 + (g % 3)::int + 1] AS branch_id
    FROM (SELECT CASE WHEN g % 10 < 6 THEN 0 ELSE 1 + ((g / 10) % 7)::int END AS ci) AS x) AS c`

// qSeedReceivedBench inserts received documents $1..$2 as storetest's
// listing benchmark describes them, with the arguments of qSeedListBench.
// The three XMLs are short: a listing never reads them.
const qSeedReceivedBench = `INSERT INTO received_documents (company_id, branch_id, id_externo, clave,
    tipo_documento, emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero,
    fecha_emision, total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal, numero,
    consecutivo, fecha_mensaje, signed_xml, estado, phase, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, last_error, attempts, created_at, updated_at)
SELECT c.company_id, c.branch_id, 'pedido-' || g, '506' || lpad(g::text, 47, '0'),
    CASE WHEN (g + g / 10) % 20 < 14 THEN '01' WHEN (g + g / 10) % 20 < 17 THEN '02'
         WHEN (g + g / 10) % 20 < 19 THEN '03' ELSE '09' END,
    '02', (100000000 + (31 * g) % 5000)::text, 'Proveedor ' || (31 * g) % 5000, '02', '3101000000',
    $5::timestamptz + make_interval(secs => g * 30 + (g * 7919) % 600), '1300', '11300',
    convert_to('<FacturaElectronica><Clave>' || g || '</Clave></FacturaElectronica>', 'UTF8'),
    '1', '05', '00001', g, lpad(g::text, 20, '0'),
    $5::timestamptz + make_interval(secs => g * 30 + 3600),
    convert_to('<MensajeReceptor><Clave>' || g || '</Clave></MensajeReceptor>', 'UTF8'),
    CASE WHEN (g / 10) % 100 < 92 THEN '01' WHEN (g / 10) % 100 < 96 THEN '04'
         WHEN (g / 10) % 100 < 98 THEN '02' WHEN (g / 10) % 100 < 99 THEN '05' ELSE '03' END,
    CASE WHEN (g / 10) % 100 < 92 THEN 'accepted' WHEN (g / 10) % 100 < 96 THEN 'submitted'
         WHEN (g / 10) % 100 < 98 THEN 'rejected' WHEN (g / 10) % 100 < 99 THEN 'retrying' ELSE 'failed' END,
    'aceptado', '1', 'Aceptado', '{}', '', 1,
    $5::timestamptz + make_interval(secs => g * 30 + 3600), $5::timestamptz + make_interval(secs => g * 30 + 3600)
FROM generate_series($1::bigint, $2::bigint) AS g
CROSS JOIN LATERAL (SELECT
    ($3::bigint[])[ci + 1] AS company_id,
    ($4::bigint[])[ci * 3 + (g % 3)::int + 1] AS branch_id
    FROM (SELECT CASE WHEN g % 10 < 6 THEN 0 ELSE 1 + ((g / 10) % 7)::int END AS ci) AS x) AS c`

// BenchmarkListDocuments seeds a million documents (FACTURAD_LIST_BENCH_ROWS)
// and times the listing's pages; see storetest.BenchList.
//
//	go test ./tenant/postgres -run '^$' -bench ListDocuments -benchtime 200x
func BenchmarkListDocuments(b *testing.B) {
	s, companies, rows, _ := seedListBench(b, qSeedListBench, "documents")
	storetest.BenchList(b, s, companies[0], rows)
}

// BenchmarkListReceived seeds a million received documents
// (FACTURAD_LIST_BENCH_ROWS) and times their listing's pages; see
// storetest.BenchListReceived.
//
//	go test ./tenant/postgres -run '^$' -bench ListReceived -benchtime 200x
func BenchmarkListReceived(b *testing.B) {
	s, companies, rows, _ := seedListBench(b, qSeedReceivedBench, "received_documents")
	storetest.BenchListReceived(b, s, companies[0], rows)
}

// seedListBench opens a store in a schema of its own, creates the
// benchmark's companies and fills table with seed, in batches. It returns
// the store, the companies, the rows seeded and a pool of one connection
// on the schema (closed with the benchmark).
func seedListBench(b *testing.B, seed, table string) (*postgres.Store, []int64, int, *pgxpool.Pool) {
	ctx := context.Background()
	url := storetest.PostgresURL(b)
	schema := storetest.UniqueName(b)
	s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.DropSchema(context.Background()); err != nil {
			b.Error(err)
		}
		s.Close()
	})
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	companies, branches := storetest.NewListBenchFixture(b, s)
	rows := storetest.ListBenchRows(b)

	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	cfg.MaxConns = 1
	raw, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(raw.Close)
	start := time.Now()
	const batch = 200_000
	for lo := 1; lo <= rows; lo += batch {
		hi := min(lo+batch-1, rows)
		if _, err := raw.Exec(ctx, seed, lo, hi, companies, branches, storetest.ListBenchStart); err != nil {
			b.Fatalf("seed %d..%d: %v", lo, hi, err)
		}
	}
	if _, err := raw.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d rows of %s in %v", rows, table, time.Since(start).Round(time.Second))
	return s, companies, rows, raw
}
