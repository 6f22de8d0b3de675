package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchmarkDocumentSizes seeds the listing benchmark's documents
// (FACTURAD_LIST_BENCH_ROWS, a million by default: the metadata a row keeps
// once its XML is archived, none of the large parts) and reports what each
// row costs on disk: the table's heap and every index, in bytes per row.
// docs/design/stores.md scales these figures to the plan's row counts.
//
//	go test ./tenant/postgres -run '^$' -bench DocumentSizes -benchtime 1x
func BenchmarkDocumentSizes(b *testing.B) {
	_, _, rows, raw := seedListBench(b, qSeedListBench, "documents")
	reportSizes(b, raw, "documents", rows)
}

// BenchmarkReceivedSizes is BenchmarkDocumentSizes for received documents
// (their seeded XMLs are a few dozen bytes, standing in for none).
//
//	go test ./tenant/postgres -run '^$' -bench ReceivedSizes -benchtime 1x
func BenchmarkReceivedSizes(b *testing.B) {
	_, _, rows, raw := seedListBench(b, qSeedReceivedBench, "received_documents")
	reportSizes(b, raw, "received_documents", rows)
}

// qRelationSizes lists table's heap and each of its indexes with their size
// in bytes.
const qRelationSizes = `SELECT 'heap', pg_relation_size($1::regclass)
UNION ALL
SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_index i WHERE i.indrelid = $1::regclass
ORDER BY 1`

func reportSizes(b *testing.B, raw *pgxpool.Pool, table string, rows int) {
	ctx := context.Background()
	type size struct {
		name  string
		bytes int64
	}
	var sizes []size
	b.ResetTimer()
	for range b.N {
		sizes = sizes[:0]
		r, err := raw.Query(ctx, qRelationSizes, table)
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			var s size
			if err := r.Scan(&s.name, &s.bytes); err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, s)
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var indexes int64
	var report strings.Builder
	for _, s := range sizes {
		per := float64(s.bytes) / float64(rows)
		fmt.Fprintf(&report, "\n%-40s %12d bytes  %6.1f bytes/row", s.name, s.bytes, per)
		if s.name == "heap" {
			b.ReportMetric(per, "heap-B/row")
		} else {
			indexes += s.bytes
		}
	}
	b.Logf("%s, %d rows:%s", table, rows, report.String())
	b.ReportMetric(float64(indexes)/float64(rows), "indexes-B/row")
}
