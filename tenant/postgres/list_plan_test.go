package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"facturad/tenant"
)

// Every shape of the listing must walk its index in the listing's order,
// with a generic plan (any parameter values): an index scan bounded by the
// company and the filter, never a sort of every match. Sequential and
// bitmap scans are turned off, as on an empty table they would win.
func TestListQueriesUseIndexes(t *testing.T) {
	s := openPlanStore(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	after := &tenant.ListKey{At: at, ID: 99}
	tests := []struct {
		name  string
		table listTable
		q     tenant.ListQuery
		index string
	}{
		{"ok/first page", documentListing, tenant.ListQuery{}, "documents_list"},
		{"ok/deep page", documentListing, tenant.ListQuery{After: after}, "documents_list"},
		{"ok/dates", documentListing, tenant.ListQuery{Desde: at.Add(-time.Hour), Hasta: at, After: after}, "documents_list"},
		{"ok/estado", documentListing, tenant.ListQuery{Estado: tenant.StateRejected, After: after}, "documents_list_estado"},
		{"ok/tipo", documentListing, tenant.ListQuery{Tipo: "03", Desde: at.Add(-time.Hour)}, "documents_list_tipo"},
		{"ok/receptor", documentListing, tenant.ListQuery{Receptor: "114480790", After: after}, "documents_list_receptor"},
		{"ok/id externo", documentListing, tenant.ListQuery{IDExterno: "pedido-1"}, "documents_branch_id_externo_key"},
		{"ok/received first page", receivedListing, tenant.ListQuery{}, "received_list"},
		{"ok/received deep page", receivedListing, tenant.ListQuery{After: after}, "received_list"},
		{"ok/received dates", receivedListing, tenant.ListQuery{Desde: at.Add(-time.Hour), Hasta: at, After: after}, "received_list"},
		{"ok/received estado", receivedListing, tenant.ListQuery{Estado: tenant.StateSent, After: after}, "received_list_estado"},
		{"ok/received tipo", receivedListing, tenant.ListQuery{Tipo: "03", Desde: at.Add(-time.Hour)}, "received_list_tipo"},
		{"ok/received supplier", receivedListing, tenant.ListQuery{Receptor: "3101123456", After: after}, "received_list_emisor"},
		{"ok/received id externo", receivedListing, tenant.ListQuery{IDExterno: "respuesta-1"}, "received_documents_branch_id_externo"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.CompanyID, q.Limit = 7, 51
			query, args := listingSQL(tt.table, q)
			types, params := make([]string, len(args)), make([]string, len(args))
			for j, a := range args {
				switch v := a.(type) {
				case int64:
					types[j], params[j] = "bigint", fmt.Sprint(v)
				case int:
					types[j], params[j] = "bigint", fmt.Sprint(v)
				case string:
					types[j], params[j] = "text", "'"+strings.ReplaceAll(v, "'", "''")+"'"
				case time.Time:
					types[j], params[j] = "timestamptz", "'"+v.Format(time.RFC3339Nano)+"'"
				default:
					t.Fatalf("argument %d: %T", j, a)
				}
			}
			text := genericPlan(t, s, fmt.Sprintf("list_%d", i), strings.Join(types, ", "), query, strings.Join(params, ", "), "enable_bitmapscan")
			sorts := strings.Contains(text, "Sort")
			if strings.Contains(tt.index, "id_externo") {
				// One document per branch at most: sorting them is free.
				sorts = false
			}
			if !strings.Contains(text, " using "+tt.index+" ") || sorts {
				t.Errorf("the generic plan does not walk %s in order:\n%s", tt.index, text)
			}
		})
	}
}
