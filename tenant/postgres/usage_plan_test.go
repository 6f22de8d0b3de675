package postgres

import (
	"context"
	"strings"
	"testing"

	"facturad/tenant"
)

// A company's month is a range read of documents_company_created (and
// received_company_created), whatever the company's history, for the usage
// calls, the first count of a quota's month and a replay's quota; the
// counts by type and estado read the index alone. The tables hold two
// years of a company's documents and messages, analysed, so that the
// planner weighs a month against the whole history as it would in
// production; sequential and bitmap scans are off.
func TestUsageQueriesUseIndexes(t *testing.T) {
	const month = "'2026-03-01 06:00+00', '2026-04-01 06:00+00'"
	s := openPlanStore(t)
	fillHistory(t, s)
	for i, c := range []struct {
		name, types, query, params string
		indexOnly                  []string
		index                      []string
	}{
		{"ok/usage of a company", "timestamptz, timestamptz, bigint", qUsageRows(usageByID), month + ", 1",
			[]string{"documents_company_created", "received_company_created"}, nil},
		{"ok/usage of a reseller's companies", "timestamptz, timestamptz, bigint", qUsageRows(usageByOwner), month + ", 1",
			[]string{"documents_company_created", "received_company_created"}, nil},
		{"ok/usage of every company", "timestamptz, timestamptz", qUsageRows(usageAll), month,
			[]string{"documents_company_created", "received_company_created"}, nil},
		{"ok/first count of a month", "bigint, text, timestamptz, timestamptz", qCountMonth, "1, '2026-03', " + month,
			[]string{"documents_company_created"}, nil},
		{"ok/quota of a replay", "bigint, text, timestamptz, timestamptz", qQuotaUse, "1, '2026-03', " + month,
			[]string{"documents_company_created"}, []string{"company_usage_pkey"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := genericPlan(t, s, "usage_"+string(rune('a'+i)), c.types, c.query, c.params, "enable_bitmapscan")
			for _, index := range c.indexOnly {
				if !strings.Contains(plan, "Index Only Scan using "+index+" ") {
					t.Errorf("the generic plan does not read %s alone:\n%s", index, plan)
				}
			}
			for _, index := range c.index {
				if !strings.Contains(plan, " using "+index+" ") {
					t.Errorf("the generic plan does not read %s:\n%s", index, plan)
				}
			}
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("the generic plan reads a table whole:\n%s", plan)
			}
		})
	}
}

// fillHistory stores a company with a branch, 20,000 documents and 5,000
// receiver's messages numbered over 2025 and 2026, and analyses the
// tables.
func fillHistory(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := tenant.Company{ID: id, RazonSocial: "Historia S.A.", NumeroIdentificacion: "3101000001"}
	b := tenant.Branch{Sucursal: "001"}
	u := tenant.APIUser{Username: "historia", PasswordHash: "x", TokenHash: []byte("historia-token"), Activo: true}
	if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO documents (company_id, branch_id, id_externo, tipo, terminal, numero, consecutivo, clave,
    situacion, emisor_tipo, emisor_numero, receptor_tipo, receptor_numero, estado, phase, ind_estado,
    codigo_mensaje, mensaje_hacienda, last_error, attempts, created_at, updated_at)
SELECT $1, $2, '', (ARRAY['01', '04', '03'])[1 + i % 3], '00001', i, '', '', '1', '02', '3101000001', '', '',
    '01', 'accepted', 'aceptado', '1', '', '', 1,
    timestamptz '2025-01-01 06:00+00' + i * interval '47 minutes', now()
FROM generate_series(1, 20000) AS i`,
		`INSERT INTO received_documents (company_id, branch_id, id_externo, clave, tipo_documento, emisor_tipo,
    emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, total_impuesto, total_comprobante,
    supplier_xml, mensaje, tipo, terminal, numero, consecutivo, estado, phase, ind_estado, codigo_mensaje,
    mensaje_hacienda, last_error, attempts, created_at, updated_at)
SELECT $1, $2, '', lpad(i::text, 50, '0'), '01', '02', '3101999999', 'Proveedor', '02', '3101000001', '0', '0',
    '\x00', '1', '05', '00001', i, '', '01', 'accepted', 'aceptado', '1', '', '', 1,
    timestamptz '2025-01-01 06:00+00' + i * interval '188 minutes', now()
FROM generate_series(1, 5000) AS i`,
	} {
		if _, err := s.pool.Exec(ctx, q, c.ID, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"companies", "documents", "received_documents", "company_usage"} {
		if _, err := s.pool.Exec(ctx, "ANALYZE "+table); err != nil {
			t.Fatal(err)
		}
	}
}
