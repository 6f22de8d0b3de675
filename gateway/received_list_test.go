package gateway

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// receivedSeq numbers the seeded received documents' claves.
var receivedSeq atomic.Int64

// seededPolicy is the signature policy of the seeded received documents
// with an odd index; those with an even one are signed without a policy
// (XAdES-BES).
const seededPolicy = "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/Resoluci%C3%B3n_General_sobre_disposiciones_t%C3%A9cnicas_comprobantes_electr%C3%B3nicos_para_efectos_tributarios.pdf"

// seedReceived stores n received documents of a branch straight into the
// store: the supplier's documents issued a minute apart from start (two
// per minute), their types, suppliers and the message's state varying
// with the index, id_externo prefix-i, signed under seededPolicy when i is
// odd.
func (w *listWorld) seedReceived(t *testing.T, companyID, branchID int64, receptor, prefix string, n int, start time.Time) {
	t.Helper()
	tipos := []string{"01", "01", "03", "02", "09"}
	estados := []tenant.State{tenant.StateAccepted, tenant.StateSent, tenant.StateRejected, tenant.StateAccepted}
	for i := range n {
		mensaje := fmt.Sprint(1 + i%3)
		r := tenant.ReceivedDocument{
			CompanyID:        companyID,
			BranchID:         branchID,
			IDExterno:        fmt.Sprintf("%s-%d", prefix, i),
			Clave:            fmt.Sprintf("506"+"060426"+"003101000000"+"0010000101%010d"+"1"+"12345678", receivedSeq.Add(1)),
			TipoDocumento:    tipos[i%len(tipos)],
			EmisorTipo:       "02",
			EmisorNumero:     fmt.Sprintf("310100000%d", i%3),
			EmisorNombre:     "Proveedor S.A.",
			ReceptorTipo:     "02",
			ReceptorNumero:   receptor,
			FechaEmision:     start.Add(time.Duration(i/2) * time.Minute),
			TotalImpuesto:    "130.5",
			TotalComprobante: "1130.5",
			SupplierXML:      []byte("<FacturaElectronica/>"),
			Mensaje:          mensaje,
			Tipo:             map[string]string{"1": "05", "2": "06", "3": "07"}[mensaje],
			Terminal:         "00001",
			FechaMensaje:     start.Add(time.Hour),
			Submission:       tenant.Submission{Phase: tenant.PhaseFor(estados[i%len(estados)]), Estado: estados[i%len(estados)]},
		}
		if i%4 == 3 {
			r.TotalImpuesto = ""
		}
		if i%2 == 1 {
			r.FirmaPolitica = seededPolicy
		}
		if err := w.received.ReserveReceived(context.Background(), &r); err != nil {
			t.Fatalf("ReserveReceived: %v", err)
		}
	}
}

// walkReceived follows next through the received listing from query to
// the last page and returns the id_externo of every item; between runs
// after each page.
func (w *listWorld) walkReceived(t *testing.T, c creds, query string, between func()) []string {
	t.Helper()
	return w.walk(t, "/api/received/v4", c, query, between, func(it map[string]any) {
		requireShape(t, "listed received document", it, shapeReceived)
		id, _ := it["id_externo"].(string)
		if i, err := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:]); err == nil {
			want := map[bool]string{true: seededPolicy}[i%2 == 1]
			if got := it["politicaFirmaProveedor"]; got != want {
				t.Errorf("listed received document %s: politicaFirmaProveedor %q, want %q", id, got, want)
			}
		}
	})
}

func TestReceivedListing(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testReceivedListing(t, newListWorld(t, k.open(t))) })
	}
}

func testReceivedListing(t *testing.T, w *listWorld) {
	a := w.createCompany(t, w.admin, "3101123456", "Compras S.A.")
	b := w.createCompany(t, w.admin, "3101654321", "Otra Empresa S.A.")
	branch2, a2 := w.createBranch(t, a.user, a.id)
	start := time.Date(2026, 4, 6, 9, 0, 0, 0, hacienda.CostaRica)
	w.seedReceived(t, a.id, a.branchID, "3101123456", "r1", 30, start)
	w.seedReceived(t, a.id, branch2, "3101123456", "r2", 15, start.Add(30*time.Second))
	w.seedReceived(t, b.id, b.branchID, "3101654321", "rb", 8, start)
	// Documents A issued are not received ones.
	w.seed(t, a.id, a.branchID, "issued", 5, start)

	all := slices.Concat(seededRows("r1", 30, start, 0), seededRows("r2", 15, start.Add(30*time.Second), 100))
	want := inListOrder(all)
	keep := func(f func(d seeded) bool) []string {
		var out []string
		for _, d := range all {
			if f(d) {
				out = append(out, d.ext)
			}
		}
		return out
	}

	t.Run("ok/a branch user lists every branch's received documents, newest first", func(t *testing.T) {
		for _, c := range []creds{a.user, a2} {
			if got := w.walkReceived(t, c, "limit=7", nil); !slices.Equal(got, want) {
				t.Errorf("walk:\n got %v\nwant %v", got, want)
			}
		}
		if got := w.walkReceived(t, a.user, fmt.Sprintf("companiaId=%d", a.id), nil); !slices.Equal(got, want) {
			t.Errorf("with its own companiaId: %v", got)
		}
	})

	t.Run("ok/an item is the received document as the read call answers it", func(t *testing.T) {
		p := w.listAt(t, "/api/received/v4", a.user, "id_externo=r1-3")
		if len(p.Items) != 1 || p.Next != "" {
			t.Fatalf("id_externo r1-3: %v next %q", p.Items, p.Next)
		}
		it := p.Items[0]
		read := w.do(t, "GET", "/api/received/"+it["clave"].(string)+"/v4", &a.user, "", nil)
		if read.status != 200 {
			t.Fatalf("read: %d %s", read.status, read.body)
		}
		if got := read.object(t); !reflect.DeepEqual(got, it) {
			t.Errorf("listed %v\n  read %v", it, got)
		}
		if it["montoTotalImpuesto"] != nil || it["totalFactura"] != 1130.5 || it["tipoDocumento"] != "02" ||
			it["emisor"].(map[string]any)["numeroIdentificacion"] != "3101000000" || it["estado"] != "01" || it["mensaje"] != "1" {
			t.Errorf("item %v", it)
		}
	})

	t.Run("ok/filters", func(t *testing.T) {
		tests := []struct {
			query string
			keep  func(d seeded) bool
		}{
			{"estado=02", func(d seeded) bool { return d.i%4 == 2 }},
			{"tipo_documento=03", func(d seeded) bool { return d.i%5 == 2 }},
			{"tipo_documento=09", func(d seeded) bool { return d.i%5 == 4 }},
			{"receptor=3101000001", func(d seeded) bool { return d.i%3 == 1 }},
			{"id_externo=r2-7", func(d seeded) bool { return d.ext == "r2-7" }},
			{"estado=01&receptor=3101000002", func(d seeded) bool { return (d.i%4 == 0 || d.i%4 == 3) && d.i%3 == 2 }},
			{"desde=2026-04-06T09:05:00&hasta=2026-04-06T09:09:00", func(d seeded) bool {
				return !d.at.Before(start.Add(5*time.Minute)) && !d.at.After(start.Add(9*time.Minute))
			}},
		}
		for _, tt := range tests {
			exp := keep(tt.keep)
			if len(exp) == 0 {
				t.Fatalf("%s: nothing to find", tt.query)
			}
			if got := w.walkReceived(t, a.user, tt.query+"&limit=3", nil); !slices.Equal(got, exp) {
				t.Errorf("%s:\n got %v\nwant %v", tt.query, got, exp)
			}
		}
		// The company is the receptor of every received document: not a
		// counterparty.
		if got := w.walkReceived(t, a.user, "receptor=3101123456", nil); len(got) != 0 {
			t.Errorf("receptor = the company itself: %v", got)
		}
		if got := w.walkReceived(t, a.user, "hasta=2026-04-05", nil); len(got) != 0 {
			t.Errorf("hasta the day before: %v", got)
		}
	})

	t.Run("ok/a walk while received documents are added meets each once", func(t *testing.T) {
		added := 0
		got := w.walkReceived(t, a.user, "limit=4", func() {
			// Newer than every page, older than every page, and at the
			// minutes being walked.
			for _, at := range []time.Time{start.Add(time.Hour), start.Add(-time.Hour), start.Add(time.Duration(added%15) * time.Minute)} {
				w.seedReceived(t, a.id, a.branchID, "3101123456", fmt.Sprintf("during%d", added), 1, at)
				added++
			}
		})
		checkWalkedOnce(t, got, want, added)
		want = w.walkReceived(t, a.user, "limit=500", nil) // what the next subtests see
	})

	t.Run("ok/admin and reseller name the company", func(t *testing.T) {
		if got := w.walkReceived(t, w.admin, fmt.Sprintf("companiaId=%d&limit=20", a.id), nil); !slices.Equal(got, want) {
			t.Errorf("admin: %d of %d", len(got), len(want))
		}
		if got := w.walkReceived(t, w.admin, fmt.Sprintf("companiaId=%d", b.id), nil); len(got) != 8 {
			t.Errorf("admin, company B: %v", got)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/received/v4", &w.admin, "", nil), 400), "companiaId")
		requireA7(t, w.do(t, "GET", "/api/received/v4?companiaId=999999", &w.admin, "", nil), 404)

		rs := w.createReseller(t, "revendedor.recibidos")
		own := w.createCompany(t, rs, "3101555444", "Cliente del Revendedor S.A.")
		w.seedReceived(t, own.id, own.branchID, "3101555444", "own", 3, start)
		if got := w.walkReceived(t, rs, fmt.Sprintf("companiaId=%d", own.id), nil); len(got) != 3 {
			t.Errorf("reseller, own company: %v", got)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/received/v4", &rs, "", nil), 400), "companiaId")
		requireA7(t, w.do(t, "GET", fmt.Sprintf("/api/received/v4?companiaId=%d", a.id), &rs, "", nil), 404)
	})

	t.Run("ok/tenant isolation", func(t *testing.T) {
		got := w.walkReceived(t, b.user, "limit=3", nil)
		if len(got) != 8 {
			t.Errorf("B lists %v", got)
		}
		for _, q := range []string{"", "id_externo=r1-1", "receptor=3101000001", "estado=02", "desde=2026-01-01"} {
			for _, ext := range w.walkReceived(t, b.user, q, nil) {
				if !strings.HasPrefix(ext, "rb-") {
					t.Errorf("B lists %s for %q", ext, q)
				}
			}
		}
		requireA7(t, w.do(t, "GET", fmt.Sprintf("/api/received/v4?companiaId=%d", a.id), &b.user, "", nil), 404)
		// A's cursor is not B's.
		p := w.listAt(t, "/api/received/v4", a.user, "limit=2")
		requireField(t, requireA7(t, w.do(t, "GET", "/api/received/v4?limit=2&cursor="+url.QueryEscape(p.Next), &b.user, "", nil), 400), "cursor")
	})

	t.Run("error/bad filters name their parameter", func(t *testing.T) {
		for _, tt := range []struct{ query, field string }{
			{"tipo_documento=04", "tipo_documento"}, // a tiquete is never answered
			{"tipo_documento=08", "tipo_documento"},
			{"tipo_documento=05", "tipo_documento"}, // the message's type is not the document's
			{"estado=06", "estado"},
			{"receptor=abc", "receptor"},
			{"limit=501", "limit"},
			{"desde=ayer", "desde"},
			{"cursor=not-a-cursor", "cursor"},
		} {
			requireField(t, requireA7(t, w.do(t, "GET", "/api/received/v4?"+tt.query, &a.user, "", nil), 400), tt.field)
		}
	})

	t.Run("error/a cursor of one listing is refused by the other", func(t *testing.T) {
		docs := w.list(t, a.user, "limit=2")
		rec := w.listAt(t, "/api/received/v4", a.user, "limit=2")
		if docs.Next == "" || rec.Next == "" {
			t.Fatalf("no next page: %q %q", docs.Next, rec.Next)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/received/v4?limit=2&cursor="+url.QueryEscape(docs.Next), &a.user, "", nil), 400), "cursor")
		requireField(t, requireA7(t, w.do(t, "GET", "/api/documents/v4?limit=2&cursor="+url.QueryEscape(rec.Next), &a.user, "", nil), 400), "cursor")
	})
}
