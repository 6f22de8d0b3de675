package sqlite

import (
	"strings"
	"testing"
	"time"

	"facturad/tenant"
)

// Every shape of the listing must walk its index in the listing's order,
// bounded by the company, its filter and the cursor: no temporary b-tree
// (a sort of every match) and no scan of the company's other rows.
func TestListQueriesUseIndexes(t *testing.T) {
	s := openTempStore(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	after := &tenant.ListKey{At: at, ID: 99}
	tests := []struct {
		name   string
		table  listTable
		q      tenant.ListQuery
		index  string
		search string // what the index lookup is bounded by
	}{
		{"ok/first page", documentListing, tenant.ListQuery{}, "documents_list", "company_id=?"},
		{"ok/deep page", documentListing, tenant.ListQuery{After: after}, "documents_list", "company_id=? AND "},
		{"ok/dates", documentListing, tenant.ListQuery{Desde: at.Add(-time.Hour), Hasta: at, After: after}, "documents_list", "company_id=? AND "},
		{"ok/estado", documentListing, tenant.ListQuery{Estado: tenant.StateRejected, After: after}, "documents_list_estado", "company_id=? AND estado=? AND "},
		{"ok/tipo", documentListing, tenant.ListQuery{Tipo: "03", Desde: at.Add(-time.Hour)}, "documents_list_tipo", "company_id=? AND tipo=? AND "},
		{"ok/estado and tipo", documentListing, tenant.ListQuery{Estado: tenant.StateAccepted, Tipo: "01", After: after}, "documents_list_estado", "company_id=? AND estado=? AND "},
		{"ok/receptor", documentListing, tenant.ListQuery{Receptor: "114480790", Estado: tenant.StateAccepted, After: after}, "documents_list_receptor", "company_id=? AND <expr>=? AND "},
		{"ok/id externo", documentListing, tenant.ListQuery{IDExterno: "pedido-1", Estado: tenant.StateAccepted}, "documents_branch_id_externo", "branch_id=? AND id_externo=?"},
		{"ok/received first page", receivedListing, tenant.ListQuery{}, "received_list", "company_id=?"},
		{"ok/received deep page", receivedListing, tenant.ListQuery{After: after}, "received_list", "company_id=? AND "},
		{"ok/received dates", receivedListing, tenant.ListQuery{Desde: at.Add(-time.Hour), Hasta: at, After: after}, "received_list", "company_id=? AND "},
		{"ok/received estado", receivedListing, tenant.ListQuery{Estado: tenant.StateSent, After: after}, "received_list_estado", "company_id=? AND estado=? AND "},
		{"ok/received tipo", receivedListing, tenant.ListQuery{Tipo: "03", Desde: at.Add(-time.Hour)}, "received_list_tipo", "company_id=? AND tipo_documento=? AND "},
		{"ok/received supplier", receivedListing, tenant.ListQuery{Receptor: "3101123456", Estado: tenant.StateAccepted, After: after}, "received_list_emisor", "company_id=? AND emisor_numero=? AND "},
		{"ok/received id externo", receivedListing, tenant.ListQuery{IDExterno: "respuesta-1", Estado: tenant.StateAccepted}, "received_documents_branch_id_externo", "branch_id=? AND id_externo=?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.CompanyID, q.Limit = 7, 51
			query, args := listingSQL(tt.table, q)
			text := queryPlan(t, s, query, args...)
			sorts := strings.Contains(text, "TEMP B-TREE")
			if strings.HasSuffix(tt.index, "branch_id_externo") {
				// One document per branch at most: sorting them is free.
				sorts = false
			}
			if !strings.Contains(text, "INDEX "+tt.index+" ("+tt.search) || sorts {
				t.Errorf("plan does not walk %s bounded by %q in order:\n%s", tt.index, tt.search, text)
			}
		})
	}
}
