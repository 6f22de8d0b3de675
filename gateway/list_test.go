package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/pipeline"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// listWorld is the gateway with the listing route over the real pipeline,
// tenant service and store, documents seeded straight into the store.
type listWorld struct {
	*world
	docs     pipeline.Store
	received tenant.ReceivedStore
}

func newListWorld(t *testing.T, store tenant.Store) *listWorld {
	t.Helper()
	w, svc := newTenantWorld(t, store)
	p, docs, _ := newTestPipeline(t, store, svc, false)
	cursorKey := make([]byte, 32)
	if _, err := rand.Read(cursorKey); err != nil {
		t.Fatal(err)
	}
	list, err := DocumentListRoute(p, cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	listReceived, err := ReceivedListRoute(p, cursorKey)
	if err != nil {
		t.Fatal(err)
	}
	received, ok := store.(tenant.ReceivedStore)
	if !ok {
		t.Fatalf("%T keeps no received documents", store)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: append(append(DocumentRoutes(p, nil, printed.Printer{}), ReceivedRoutes(p, nil, printed.Printer{})...), list, listReceived)})
	return &listWorld{world: w, docs: docs, received: received}
}

// seed stores n documents of a branch: issue times a minute apart from
// start (several sharing one), states, types and receptors varying with
// the index, id_externo prefix-i.
func (w *listWorld) seed(t *testing.T, companyID, branchID int64, prefix string, n int, start time.Time) {
	t.Helper()
	estados := []tenant.State{tenant.StateAccepted, tenant.StateAccepted, tenant.StateRejected, tenant.StateSent}
	tipos := []string{"01", "01", "04", "03", "08"}
	for i := range n {
		d := tenant.Document{
			CompanyID:      companyID,
			BranchID:       branchID,
			IDExterno:      fmt.Sprintf("%s-%d", prefix, i),
			Tipo:           tipos[i%len(tipos)],
			Terminal:       "00001",
			Situacion:      "1",
			FechaEmision:   start.Add(time.Duration(i/2) * time.Minute),
			ReceptorTipo:   "01",
			ReceptorNumero: fmt.Sprintf("1%08d", i%3),
			Submission:     tenant.Submission{Phase: tenant.PhaseFor(estados[i%len(estados)]), Estado: estados[i%len(estados)]},
		}
		if d.Tipo == "08" {
			d.EmisorTipo, d.EmisorNumero, d.ReceptorNumero = d.ReceptorTipo, d.ReceptorNumero, "3101000000"
		}
		if err := w.docs.ReserveDocument(context.Background(), &d); err != nil {
			t.Fatalf("ReserveDocument: %v", err)
		}
	}
}

// page is a listing's answer.
type page struct {
	Items []map[string]any `json:"items"`
	Next  string           `json:"next"`
}

func (w *listWorld) list(t *testing.T, c creds, query string) page {
	t.Helper()
	return w.listAt(t, "/api/documents/v4", c, query)
}

// listAt reads one page of the listing at path.
func (w *listWorld) listAt(t *testing.T, path string, c creds, query string) page {
	t.Helper()
	r := w.do(t, "GET", path+"?"+query, &c, "", nil)
	if r.status != 200 {
		t.Fatalf("list %s: %d %s", query, r.status, r.body)
	}
	var p page
	if err := json.Unmarshal(r.body, &p); err != nil || p.Items == nil {
		t.Fatalf("list %s: not a page: %v: %s", query, err, r.body)
	}
	return p
}

// walkAll follows next from query to the last page and returns the
// id_externo of every item.
func (w *listWorld) walkAll(t *testing.T, c creds, query string) []string {
	t.Helper()
	return w.walkAllWith(t, c, query, nil)
}

// walkAllWith is walkAll calling between after each page but the last.
func (w *listWorld) walkAllWith(t *testing.T, c creds, query string, between func()) []string {
	t.Helper()
	return w.walk(t, "/api/documents/v4", c, query, between, func(it map[string]any) {
		requireShape(t, "listed Document", it, shapeDocument)
		if it["xml"] != nil || it["xml_respuesta"] != nil {
			t.Errorf("a listed document carries XML: %v", it)
		}
	})
}

// walk follows next through the listing at path from query to the last
// page, checking every item with check, and returns their id_externo;
// between (when not nil) runs after each page but the last.
func (w *listWorld) walk(t *testing.T, path string, c creds, query string, between func(), check func(it map[string]any)) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 1000 {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := w.listAt(t, path, c, q)
		for _, it := range p.Items {
			check(it)
			out = append(out, it["id_externo"].(string))
		}
		if p.Next == "" {
			return out
		}
		cursor = p.Next
		if between != nil {
			between()
		}
	}
	t.Fatal("the walk does not end")
	return nil
}

// createBranch creates branch 002 of a company as by, its user's company
// user, and returns the new branch's id and user.
func (w *listWorld) createBranch(t *testing.T, by creds, companyID int64) (int64, creds) {
	t.Helper()
	r := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", companyID), &by, "application/json",
		[]byte(`{"Sucursal":"002","RazonComercial":"Sucursal Norte","MonedaIdLocal":"CRC","MonedaIdExtranjera":"USD","VerMonedaExtranjera":"N"}`))
	if r.status != 200 {
		t.Fatalf("create branch: %d %s", r.status, r.body)
	}
	m := r.object(t)
	return num(m["id"]), creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
}

// createReseller creates a reseller named usuario and returns its user.
func (w *listWorld) createReseller(t *testing.T, usuario string) creds {
	t.Helper()
	r := w.do(t, "POST", "/api/resellers/v4", &w.admin, "application/json", []byte(`{"usuario":"`+usuario+`"}`))
	if r.status != 200 {
		t.Fatalf("create reseller: %d %s", r.status, r.body)
	}
	m := r.object(t)
	return creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
}

// seeded is a seeded row as a listing orders it: its id_externo, its issue
// time, the order it was stored in, and its index in its seed call.
type seeded struct {
	ext string
	at  time.Time
	seq int
	i   int
}

// seededRows are the rows of a seed call of n rows with prefix, issued
// two a minute from start (seed and seedReceived), stored after first
// others.
func seededRows(prefix string, n int, start time.Time, first int) []seeded {
	var out []seeded
	for i := range n {
		out = append(out, seeded{fmt.Sprintf("%s-%d", prefix, i), start.Add(time.Duration(i/2) * time.Minute), first + i, i})
	}
	return out
}

// inListOrder sorts rows as a listing returns them, newest first and the
// later stored first among those issued together, and returns their
// id_externo.
func inListOrder(rows []seeded) []string {
	slices.SortFunc(rows, func(x, y seeded) int {
		if c := y.at.Compare(x.at); c != 0 {
			return c
		}
		return y.seq - x.seq
	})
	var out []string
	for _, d := range rows {
		out = append(out, d.ext)
	}
	return out
}

// checkWalkedOnce checks a walk made while rows were added: every row of
// want, there before the walk, is met exactly once, none twice, and at
// least 30 were added meanwhile.
func checkWalkedOnce(t *testing.T, got, want []string, added int) {
	t.Helper()
	seen := map[string]int{}
	for _, ext := range got {
		if seen[ext]++; seen[ext] == 2 {
			t.Errorf("%s listed twice", ext)
		}
	}
	for _, ext := range want {
		if seen[ext] != 1 {
			t.Errorf("%s, there before the walk, listed %d times", ext, seen[ext])
		}
	}
	if added < 30 {
		t.Errorf("only %d added during the walk", added)
	}
}

func TestDocumentListing(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testDocumentListing(t, newListWorld(t, k.open(t))) })
	}
}

func testDocumentListing(t *testing.T, w *listWorld) {
	a := w.createCompany(t, w.admin, "3101123456", "Listados S.A.")
	b := w.createCompany(t, w.admin, "3101654321", "Otra Empresa S.A.")
	// A second branch of A, with its own user.
	branch2, a2 := w.createBranch(t, a.user, a.id)
	start := time.Date(2026, 2, 10, 8, 0, 0, 0, hacienda.CostaRica)
	w.seed(t, a.id, a.branchID, "a1", 40, start)
	w.seed(t, a.id, branch2, "a2", 25, start.Add(30*time.Second))
	w.seed(t, b.id, b.branchID, "b", 10, start)

	// The expected order: newest first by issue time, then the later
	// numbered first; a1-i is at minute i/2, a2-i at minute i/2 and 30s.
	all := slices.Concat(seededRows("a1", 40, start, 0), seededRows("a2", 25, start.Add(30*time.Second), 100))
	want := inListOrder(all)

	t.Run("ok/a branch user lists every branch of its company, newest first", func(t *testing.T) {
		for _, c := range []creds{a.user, a2} {
			if got := w.walkAll(t, c, "limit=7"); !slices.Equal(got, want) {
				t.Errorf("walk:\n got %v\nwant %v", got, want)
			}
		}
		// Its own companiaId is fine too.
		if got := w.walkAll(t, a.user, fmt.Sprintf("limit=500&companiaId=%d", a.id)); !slices.Equal(got, want) {
			t.Errorf("with companiaId: %v", got)
		}
	})

	t.Run("ok/default limit 50 and the last page has no next", func(t *testing.T) {
		p := w.list(t, a.user, "")
		if len(p.Items) != 50 || p.Next == "" {
			t.Fatalf("first page: %d items, next %q", len(p.Items), p.Next)
		}
		p = w.list(t, a.user, "cursor="+url.QueryEscape(p.Next))
		if len(p.Items) != 15 || p.Next != "" {
			t.Errorf("second page: %d items, next %q", len(p.Items), p.Next)
		}
		// A page ending exactly at the last document has a next, whose
		// page is empty.
		p = w.list(t, a.user, "limit=65")
		if len(p.Items) != 65 || p.Next != "" {
			t.Errorf("one page of all: %d items, next %q", len(p.Items), p.Next)
		}
		p = w.list(t, a.user, "limit=500")
		if len(p.Items) != 65 || p.Next != "" {
			t.Errorf("limit 500: %d items, next %q", len(p.Items), p.Next)
		}
	})

	t.Run("ok/the page size may change between pages", func(t *testing.T) {
		p := w.list(t, a.user, "limit=10")
		p2 := w.list(t, a.user, "limit=3&cursor="+url.QueryEscape(p.Next))
		if len(p2.Items) != 3 || p2.Items[0]["id_externo"] != want[10] {
			t.Errorf("second page: %v", p2.Items)
		}
	})

	t.Run("ok/filters", func(t *testing.T) {
		tests := []struct {
			query string
			keep  func(ext string, i int) bool
		}{
			{"estado=02", func(_ string, i int) bool { return i%4 == 2 }},
			{"tipo_documento=04", func(_ string, i int) bool { return i%5 == 2 }},
			{"receptor=100000001", func(_ string, i int) bool { return i%3 == 1 }},
			{"id_externo=a2-7", func(ext string, _ int) bool { return ext == "a2-7" }},
			{"ID_EXTERNO=a1-3", func(ext string, _ int) bool { return ext == "a1-3" }},
			{"estado=01&tipo_documento=01", func(_ string, i int) bool { return (i%4 == 0 || i%4 == 1) && (i%5 == 0 || i%5 == 1) }},
		}
		for _, tt := range tests {
			var exp []string
			for _, ext := range want {
				var i int
				fmt.Sscanf(ext[strings.Index(ext, "-")+1:], "%d", &i)
				if tt.keep(ext, i) {
					exp = append(exp, ext)
				}
			}
			if len(exp) == 0 {
				t.Fatalf("%s: nothing to find", tt.query)
			}
			if got := w.walkAll(t, a.user, tt.query+"&limit=4"); !slices.Equal(got, exp) {
				t.Errorf("%s:\n got %v\nwant %v", tt.query, got, exp)
			}
		}
		// Dates, in Costa Rica time: from minute 5 to minute 9, included.
		var exp []string
		for _, d := range all {
			if !d.at.Before(start.Add(5*time.Minute)) && !d.at.After(start.Add(9*time.Minute)) {
				exp = append(exp, d.ext)
			}
		}
		if got := w.walkAll(t, a.user, "desde=2026-02-10T08:05:00&hasta=2026-02-10T08:09:00&limit=3"); !slices.Equal(got, exp) {
			t.Errorf("desde hasta:\n got %v\nwant %v", got, exp)
		}
		// A date alone as hasta is the whole day; the day before holds none.
		if got := w.walkAll(t, a.user, "hasta=2026-02-10"); len(got) != len(want) {
			t.Errorf("hasta a whole day: %d documents", len(got))
		}
		if got := w.walkAll(t, a.user, "hasta=2026-02-09"); len(got) != 0 {
			t.Errorf("hasta the day before: %v", got)
		}
	})

	t.Run("ok/a walk while documents are added meets each once", func(t *testing.T) {
		added := 0
		got := w.walkAllWith(t, a.user, "limit=6", func() {
			// Issued after every page, before every page, and at the
			// minutes being walked.
			for _, at := range []time.Time{start.Add(time.Hour), start.Add(-time.Hour), start.Add(time.Duration(added%20) * time.Minute)} {
				w.seed(t, a.id, a.branchID, fmt.Sprintf("during%d", added), 1, at)
				added++
			}
		})
		checkWalkedOnce(t, got, want, added)
		want = w.walkAll(t, a.user, "limit=500") // what the next subtests see
	})

	t.Run("ok/admin and reseller name the company", func(t *testing.T) {
		if got := w.walkAll(t, w.admin, fmt.Sprintf("companiaId=%d&limit=20", a.id)); !slices.Equal(got, want) {
			t.Errorf("admin: %v", got)
		}
		if got := w.walkAll(t, w.admin, fmt.Sprintf("companiaId=%d", b.id)); len(got) != 10 {
			t.Errorf("admin, company B: %v", got)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/documents/v4", &w.admin, "", nil), 400), "companiaId")
		requireA7(t, w.do(t, "GET", "/api/documents/v4?companiaId=999999", &w.admin, "", nil), 404)

		rs := w.createReseller(t, "revendedor.listas")
		own := w.createCompany(t, rs, "3101555444", "Cliente del Revendedor S.A.")
		w.seed(t, own.id, own.branchID, "own", 3, start)
		if got := w.walkAll(t, rs, fmt.Sprintf("companiaId=%d", own.id)); len(got) != 3 {
			t.Errorf("reseller, own company: %v", got)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/documents/v4", &rs, "", nil), 400), "companiaId")
		requireA7(t, w.do(t, "GET", fmt.Sprintf("/api/documents/v4?companiaId=%d", a.id), &rs, "", nil), 404)
	})

	t.Run("ok/tenant isolation", func(t *testing.T) {
		// B's user sees B's documents only, and A's company is a 404.
		got := w.walkAll(t, b.user, "limit=3")
		if len(got) != 10 {
			t.Errorf("B lists %v", got)
		}
		for _, ext := range got {
			if !strings.HasPrefix(ext, "b-") {
				t.Errorf("B lists %s", ext)
			}
		}
		requireA7(t, w.do(t, "GET", fmt.Sprintf("/api/documents/v4?companiaId=%d", a.id), &b.user, "", nil), 404)
		// Whatever B filters on, A's documents never appear.
		for _, q := range []string{"id_externo=a1-1", "receptor=100000001", "estado=02", "desde=2026-01-01"} {
			for _, ext := range w.walkAll(t, b.user, q) {
				if !strings.HasPrefix(ext, "b-") {
					t.Errorf("B lists %s for %s", ext, q)
				}
			}
		}
	})

	t.Run("error/bad filters name their parameter", func(t *testing.T) {
		tests := []struct{ query, field string }{
			{"limit=0", "limit"},
			{"limit=501", "limit"},
			{"limit=diez", "limit"},
			{"limit=-1", "limit"},
			{"desde=ayer", "desde"},
			{"hasta=2026-13-01", "hasta"},
			{"desde=2026-02-10T10:00:00&hasta=2026-02-10T09:00:00", "hasta"},
			{"estado=06", "estado"},
			{"estado=Accepted", "estado"},
			{"tipo_documento=05", "tipo_documento"},
			{"receptor=abc", "receptor"},
			{"receptor=1-0987-0654", "receptor"},
			{"id_externo=" + strings.Repeat("x", 101), "id_externo"},
			{"estado=01&estado=02", "estado"},
			{"companiaId=abc", "companiaId"},
			{"companiaId=-3", "companiaId"},
			{"cursor=not-a-cursor", "cursor"},
		}
		for _, tt := range tests {
			errs := requireA7(t, w.do(t, "GET", "/api/documents/v4?"+tt.query, &a.user, "", nil), 400)
			requireField(t, errs, tt.field)
		}
		// Several bad parameters are reported together.
		errs := requireA7(t, w.do(t, "GET", "/api/documents/v4?limit=0&estado=9", &a.user, "", nil), 400)
		requireField(t, errs, "limit")
		requireField(t, errs, "estado")
	})

	t.Run("error/a tampered or foreign cursor", func(t *testing.T) {
		p := w.list(t, a.user, "limit=5&estado=01")
		if p.Next == "" {
			t.Fatal("no next page")
		}
		raw, err := base64.RawURLEncoding.DecodeString(p.Next)
		if err != nil {
			t.Fatalf("cursor %q: %v", p.Next, err)
		}
		// Every byte changed is refused.
		for i := range raw {
			bad := slices.Clone(raw)
			bad[i] ^= 0x01
			c := base64.RawURLEncoding.EncodeToString(bad)
			errs := requireA7(t, w.do(t, "GET", "/api/documents/v4?limit=5&estado=01&cursor="+c, &a.user, "", nil), 400)
			requireField(t, errs, "cursor")
		}
		for _, tt := range []struct {
			who   creds
			query string
		}{
			{a.user, "estado=02"},                    // other filters
			{a.user, ""},                             // no filter
			{a.user, "estado=01&receptor=100000001"}, // one filter more
			{w.admin, fmt.Sprintf("estado=01&companiaId=%d", b.id)}, // another company
			{b.user, "estado=01"}, // another tenant
		} {
			errs := requireA7(t, w.do(t, "GET", "/api/documents/v4?"+tt.query+"&cursor="+url.QueryEscape(p.Next), &tt.who, "", nil), 400)
			requireField(t, errs, "cursor")
		}
		// The same filters with another limit, and an admin naming the
		// company, take it.
		if p2 := w.list(t, w.admin, fmt.Sprintf("estado=01&limit=2&companiaId=%d&cursor=%s", a.id, url.QueryEscape(p.Next))); len(p2.Items) != 2 {
			t.Errorf("admin on A with A's cursor: %v", p2.Items)
		}
	})
}

// TestListCursorRoundTrip: a cursor made for a place opens to exactly that
// place, and only for the listing, company and filters it was made for.
func TestListCursorRoundTrip(t *testing.T) {
	c := listCursors{key: []byte("0123456789abcdef0123456789abcdef")}
	f := tenant.ListQuery{Estado: tenant.StateAccepted, Desde: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Limit: 50}
	k := tenant.ListKey{At: time.Date(2026, 2, 3, 4, 5, 6, 123456000, time.UTC), ID: 4242}
	s := c.make("documents", 7, f, k)
	got, err := c.open("documents", 7, f, s)
	if err != nil || !got.At.Equal(k.At) || got.ID != k.ID {
		t.Fatalf("open = %+v, %v; want %+v", got, err, k)
	}
	f2 := f
	f2.Limit = 10
	if _, err := c.open("documents", 7, f2, s); err != nil {
		t.Errorf("another limit: %v", err)
	}
	other := []struct {
		name    string
		kind    string
		company int64
		f       tenant.ListQuery
		key     []byte
	}{
		{"another listing", "received", 7, f, c.key},
		{"another company", "documents", 8, f, c.key},
		{"another estado", "documents", 7, tenant.ListQuery{Estado: tenant.StateRejected, Desde: f.Desde}, c.key},
		{"no desde", "documents", 7, tenant.ListQuery{Estado: f.Estado}, c.key},
		{"another key", "documents", 7, f, []byte("fedcba9876543210fedcba9876543210")},
	}
	for _, o := range other {
		if _, err := (listCursors{key: o.key}).open(o.kind, o.company, o.f, s); err == nil {
			t.Errorf("%s: the cursor opens", o.name)
		}
	}
	if _, err := DocumentListRoute(nil, make([]byte, 16)); err == nil {
		t.Error("a 16-byte cursor key is taken")
	}
}

// The tipo_documento a listing takes: the issued types for the documents
// (A.5), the answered ones for the received (A.10); both come from
// hacienda's table of types.
func TestListTipos(t *testing.T) {
	if want := []string{"01", "02", "03", "04", "08", "09", "10"}; !slices.Equal(documentTipos, want) {
		t.Errorf("documents take %v, want %v", documentTipos, want)
	}
	if want := []string{"01", "02", "03", "09"}; !slices.Equal(receivedTipos, want) {
		t.Errorf("received take %v, want %v", receivedTipos, want)
	}
}
