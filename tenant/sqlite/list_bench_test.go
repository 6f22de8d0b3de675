package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// qSeedListBench inserts documents ?1..?2 as storetest's listing benchmark
// describes them; ?3 and ?4 are JSON arrays of the companies and branches,
// ?5 the first issue time in Unix seconds. Times are the store's fixed-width
// UTC text. No signed XML: a listing never reads it.
const qSeedListBench = `WITH RECURSIVE g(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM g WHERE n < ?2),
x AS (SELECT n, CASE WHEN n % 10 < 6 THEN 0 ELSE 1 + (n / 10) % 7 END AS ci FROM g)
INSERT INTO documents (company_id, branch_id, id_externo, tipo, terminal,
    numero, consecutivo, clave, situacion, fecha_emision, emisor_tipo, emisor_numero,
    receptor_tipo, receptor_numero, estado, phase, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, last_error, attempts, created_at, updated_at)
SELECT json_extract(?3, '$[' || ci || ']'), json_extract(?4, '$[' || (ci * 3 + n % 3) || ']'),
    'pedido-' || n,
    CASE WHEN (n + n / 10) % 20 < 14 THEN '01' WHEN (n + n / 10) % 20 < 17 THEN '04'
         WHEN (n + n / 10) % 20 < 19 THEN '03' ELSE '08' END,
    '00001', n, printf('%020d', n), '506' || printf('%047d', n), '1',
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30 + (n * 7919) % 600, 'unixepoch'),
    '02', '3101000000', '01', CAST(100000000 + (31 * n) % 5000 AS TEXT),
    CASE WHEN (n / 10) % 100 < 92 THEN '01' WHEN (n / 10) % 100 < 96 THEN '04'
         WHEN (n / 10) % 100 < 98 THEN '02' WHEN (n / 10) % 100 < 99 THEN '05' ELSE '03' END,
    CASE WHEN (n / 10) % 100 < 92 THEN 'accepted' WHEN (n / 10) % 100 < 96 THEN 'submitted'
         WHEN (n / 10) % 100 < 98 THEN 'rejected' WHEN (n / 10) % 100 < 99 THEN 'retrying' ELSE 'failed' END,
    'aceptado', '1', 'Aceptado', '[]', '', 1,
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30, 'unixepoch'),
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30, 'unixepoch')
FROM x`

// qSeedReceivedBench inserts received documents ?1..?2 as storetest's
// listing benchmark describes them, with the arguments of qSeedListBench.
// The three XMLs are short: a listing never reads them.
const qSeedReceivedBench = `WITH RECURSIVE g(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM g WHERE n < ?2),
x AS (SELECT n, CASE WHEN n % 10 < 6 THEN 0 ELSE 1 + (n / 10) % 7 END AS ci FROM g)
INSERT INTO received_documents (company_id, branch_id, id_externo, clave,
    tipo_documento, emisor_tipo, emisor_numero, emisor_nombre, receptor_tipo, receptor_numero,
    fecha_emision, total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal, numero,
    consecutivo, fecha_mensaje, signed_xml, estado, phase, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, last_error, attempts, created_at, updated_at)
SELECT json_extract(?3, '$[' || ci || ']'), json_extract(?4, '$[' || (ci * 3 + n % 3) || ']'),
    'pedido-' || n, '506' || printf('%047d', n),
    CASE WHEN (n + n / 10) % 20 < 14 THEN '01' WHEN (n + n / 10) % 20 < 17 THEN '02'
         WHEN (n + n / 10) % 20 < 19 THEN '03' ELSE '09' END,
    '02', CAST(100000000 + (31 * n) % 5000 AS TEXT), 'Proveedor ' || (31 * n) % 5000, '02', '3101000000',
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30 + (n * 7919) % 600, 'unixepoch'), '1300', '11300',
    CAST('<FacturaElectronica><Clave>' || n || '</Clave></FacturaElectronica>' AS BLOB),
    '1', '05', '00001', n, printf('%020d', n),
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30 + 3600, 'unixepoch'),
    CAST('<MensajeReceptor><Clave>' || n || '</Clave></MensajeReceptor>' AS BLOB),
    CASE WHEN (n / 10) % 100 < 92 THEN '01' WHEN (n / 10) % 100 < 96 THEN '04'
         WHEN (n / 10) % 100 < 98 THEN '02' WHEN (n / 10) % 100 < 99 THEN '05' ELSE '03' END,
    CASE WHEN (n / 10) % 100 < 92 THEN 'accepted' WHEN (n / 10) % 100 < 96 THEN 'submitted'
         WHEN (n / 10) % 100 < 98 THEN 'rejected' WHEN (n / 10) % 100 < 99 THEN 'retrying' ELSE 'failed' END,
    'aceptado', '1', 'Aceptado', '[]', '', 1,
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30 + 3600, 'unixepoch'),
    strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?5 + n * 30 + 3600, 'unixepoch')
FROM x`

// BenchmarkListDocuments seeds a million documents (FACTURAD_LIST_BENCH_ROWS)
// and times the listing's pages; see storetest.BenchList.
//
//	go test ./tenant/sqlite -run '^$' -bench ListDocuments -benchtime 200x
func BenchmarkListDocuments(b *testing.B) {
	s, companies, rows := seedListBench(b, qSeedListBench)
	storetest.BenchList(b, s, companies[0], rows)
}

// BenchmarkListReceived seeds a million received documents
// (FACTURAD_LIST_BENCH_ROWS) and times their listing's pages; see
// storetest.BenchListReceived.
//
//	go test ./tenant/sqlite -run '^$' -bench ListReceived -benchtime 200x
func BenchmarkListReceived(b *testing.B) {
	s, companies, rows := seedListBench(b, qSeedReceivedBench)
	storetest.BenchListReceived(b, s, companies[0], rows)
}

// seedListBench opens a store in a file of its own, creates the
// benchmark's companies and seeds rows with seed, in batches.
func seedListBench(b *testing.B, seed string) (*sqlite.Store, []int64, int) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "facturad.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	companies, branches := storetest.NewListBenchFixture(b, s)
	rows := storetest.ListBenchRows(b)

	// The seed writes through a connection of its own to the same file.
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	cs, _ := json.Marshal(companies)
	bs, _ := json.Marshal(branches)
	start := time.Now()
	const batch = 100_000
	for lo := 1; lo <= rows; lo += batch {
		hi := min(lo+batch-1, rows)
		if _, err := raw.ExecContext(ctx, seed, lo, hi, string(cs), string(bs), storetest.ListBenchStart.Unix()); err != nil {
			b.Fatalf("seed %d..%d: %v", lo, hi, err)
		}
	}
	b.Logf("seeded %d rows in %v", rows, time.Since(start).Round(time.Second))
	return s, companies, rows
}
