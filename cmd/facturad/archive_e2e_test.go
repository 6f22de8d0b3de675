package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda/sandbox"
	"facturad/pipeline/archivesweep"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/archive/archivetest"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
	"facturad/tenant/storetest"
)

// The archive (A.15) through the whole service: settled documents are
// copied to an S3-compatible store of the test's own (SeaweedFS) and
// dropped from the database after a short archive_after; every route
// serves them byte for byte as before; with the object store killed, the
// parts answer 503 + Retry-After while the metadata and the listings
// answer, and nothing new is dropped; with it back, everything is served
// again and what waited is archived.

// archiveAfter is the service's archive_after in these tests: the sweep
// runs as often.
const archiveAfter = 4 * time.Second

// archivedStore is the store of the service under test, opened by the
// test beside it.
type archivedStore interface {
	DocumentByClave(ctx context.Context, clave string) (tenant.Document, error)
	ReceivedByClave(ctx context.Context, companyID int64, clave string) (tenant.ReceivedDocument, error)
	tenant.ArchiveStore
}

func TestArchiveEndToEndSQLite(t *testing.T) {
	notQuick(t, "an end-to-end drill (the Quick start runs one)")
	dir := t.TempDir()
	archiveEndToEnd(t, dir, nil, func() archivedStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, "facturad.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestArchiveEndToEndPostgresRedis(t *testing.T) {
	notQuick(t, "the archive end to end on PostgreSQL and Redis (TestArchiveEndToEndSQLite runs)")
	dbURL := postgresSchema(t)
	redisURL := storetest.RedisURL(t)
	archiveEndToEnd(t, t.TempDir(), []string{"--database-url", dbURL, "--redis-url", redisURL, "--master-key", masterKey(t)},
		func() archivedStore {
			s, err := postgres.Open(context.Background(), dbURL, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
}

// served is what one GET route answered: its status, content type and
// body.
type served struct {
	status int
	ctype  string
	body   []byte
}

func archiveEndToEnd(t *testing.T, dataDir string, storeArgs []string, open func() archivedStore) {
	weed := archivetest.StartWeed(t)
	sb := sandbox.NewTestServer(t, sandbox.Options{})
	args := append(append(sandboxService(t, sb),
		"--archive-url", weed.URL(), "--archive-after", archiveAfter.String(),
		"--archive-access-key", weed.Config.AccessKey, "--archive-secret-key", weed.Config.SecretKey),
		storeArgs...)
	out, api, adminAddr, stop := startService(t, dataDir, args...)
	defer stop()
	store := open()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	const supplierID, buyerID = "3101888001", "3101888002"
	supplier, supplierCompany := createCompanyWith(t, admin, ca, supplierID, certmint.Options{}, nil)
	buyerAPI, buyerCompany := createCompanyWith(t, admin, ca, buyerID, certmint.Options{}, nil)
	buyer, err := client.New(buyerAPI.base, client.WithCredentials(buyerAPI.user, buyerAPI.pass, buyerAPI.token), client.WithHTTPClient(checkedHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}

	// What every route serves while the store keeps the parts, read as
	// soon as a document settles (archive_after is long enough for that:
	// the store is asked that it still keeps them).
	docPaths := func(clave string) []string {
		p := "/api/documents/" + clave
		return []string{p + "/xml/v4", p + "/response-xml/v4", p + "/pdf/v4", p + "/v4?includeXml=true&includeResponseXml=true"}
	}
	before := map[string]served{}
	record := func(c apiClient, paths []string, kept func() bool) {
		t.Helper()
		for _, p := range paths {
			if before[p] = get(t, c, p); before[p].status != 200 || len(before[p].body) == 0 {
				t.Fatalf("GET %s before the drop: %d %s", p, before[p].status, before[p].body)
			}
		}
		if !kept() {
			t.Fatalf("the store dropped the parts before the test read %v: a slow machine; make archiveAfter longer", paths)
		}
	}
	keeps := func(clave string) func() bool {
		return func() bool {
			d, err := store.DocumentByClave(ctx, clave)
			return err == nil && !d.PartsDropped()
		}
	}

	// Two documents issued and settled (01), and the buyer's answer to
	// the first, settled too.
	var claves []string
	for _, id := range []string{"archivo-1", "archivo-2"} {
		issueTo(t, supplier, buyerID, id)
		d := sentDocument(t, supplier, buyerID, id)
		record(supplier, docPaths(d.Clave), keeps(d.Clave))
		claves = append(claves, d.Clave)
	}
	rec, err := buyer.Receive(ctx, &client.ReceiveRequest{XML: before[docPaths(claves[0])[0]].body, IDExterno: "respuesta-archivo",
		Mensaje: client.MensajeAceptado, CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: "3250.13"})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	if final, err := buyer.WaitReceivedFinal(ctx, rec.Clave, 100*time.Millisecond); err != nil || final.Estado != client.EstadoAccepted {
		t.Fatalf("the message's verdict: %+v %v", final, err)
	}
	recPaths := []string{"/api/received/" + rec.Clave + "/xml/v4", "/api/received/" + rec.Clave + "/message-xml/v4",
		"/api/received/" + rec.Clave + "/response-xml/v4", "/api/received/" + rec.Clave + "/pdf/v4"}
	record(buyerAPI, recPaths, func() bool {
		r, err := store.ReceivedByClave(ctx, buyerCompany, rec.Clave)
		return err == nil && !r.PartsDropped()
	})
	metaPaths := []string{"/api/documents/" + claves[0] + "/v4", "/api/documents/v4"}
	recMetaPaths := []string{"/api/received/" + rec.Clave + "/v4", "/api/received/v4"}
	record(supplier, metaPaths, func() bool { return true })
	record(buyerAPI, recMetaPaths, func() bool { return true })
	replay := func(id string, includeData bool) (int, http.Header, []byte) {
		body := issueBody(buyerID, id)
		q := ""
		if includeData {
			q = "?includeData=true"
		}
		status, h, b, err := supplier.try(checkedHTTP(t), supplier.base, "POST", "/api/documents/v4"+q, "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		return status, h, b
	}
	_, _, replayed := replay("archivo-1", true)
	_, _, replayedMeta := replay("archivo-1", false)

	// Archived, then dropped: the database keeps no copy.
	waitDropped(t, store, claves, buyerCompany, rec.Clave)

	checkServed := func(t *testing.T, when string) {
		t.Helper()
		for _, c := range claves {
			for _, p := range docPaths(c) {
				if got := get(t, supplier, p); !sameServed(got, before[p]) {
					t.Errorf("%s: GET %s: %d %s (%d bytes), before the drop %d (%d bytes)", when, p, got.status, got.ctype, len(got.body), before[p].status, len(before[p].body))
				}
			}
		}
		for _, p := range metaPaths {
			if got := get(t, supplier, p); !sameServed(got, before[p]) {
				t.Errorf("%s: GET %s: %d %s, before the drop %s", when, p, got.status, got.body, before[p].body)
			}
		}
		for _, p := range append(recPaths, recMetaPaths...) {
			if got := get(t, buyerAPI, p); !sameServed(got, before[p]) {
				t.Errorf("%s: GET %s: %d (%d bytes), before the drop %d (%d bytes)", when, p, got.status, len(got.body), before[p].status, len(before[p].body))
			}
		}
		if status, _, b := replay("archivo-1", true); status != 200 || !bytes.Equal(b, replayed) {
			t.Errorf("%s: the send replayed with includeData: %d %s", when, status, b)
		}
		if status, _, b := replay("archivo-1", false); status != 200 || !bytes.Equal(b, replayedMeta) {
			t.Errorf("%s: the send replayed: %d %s", when, status, b)
		}
	}
	t.Run("served from the archive", func(t *testing.T) { checkServed(t, "after the drop") })

	// An export of the period reads the dropped parts from the archive
	// too: its entries are what the routes served before the drop.
	t.Run("exported from the archive", func(t *testing.T) {
		issued := exportEntries(t, supplier, supplierCompany)
		for _, c := range claves {
			for name, p := range map[string]string{"emitidos/" + c + ".xml": docPaths(c)[0], "emitidos/" + c + "-respuesta.xml": docPaths(c)[1]} {
				if !bytes.Equal(issued[name], before[p].body) {
					t.Errorf("export entry %s: %d bytes, GET %s before the drop: %d bytes", name, len(issued[name]), p, len(before[p].body))
				}
			}
		}
		received := exportEntries(t, buyerAPI, buyerCompany)
		for name, p := range map[string]string{"recibidos/" + rec.Clave + ".xml": recPaths[0],
			"recibidos/" + rec.Clave + "-mensaje.xml": recPaths[1], "recibidos/" + rec.Clave + "-respuesta.xml": recPaths[2]} {
			if !bytes.Equal(received[name], before[p].body) {
				t.Errorf("export entry %s: %d bytes, GET %s before the drop: %d bytes", name, len(received[name]), p, len(before[p].body))
			}
		}
	})

	// The object store dies.
	weed.Kill()
	var fresh string
	t.Run("archive down", func(t *testing.T) {
		unavailable := func(c apiClient, p string) {
			t.Helper()
			status, h, b, err := c.try(checkedHTTP(t), c.base, "GET", p, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			checkArchiveUnavailable(t, "GET "+p, status, h, b)
		}
		for _, c := range claves {
			for _, p := range docPaths(c) {
				unavailable(supplier, p)
			}
		}
		for _, p := range recPaths {
			unavailable(buyerAPI, p)
		}
		for _, p := range metaPaths {
			if got := get(t, supplier, p); !sameServed(got, before[p]) {
				t.Errorf("GET %s with the archive down: %d %s, before %s", p, got.status, got.body, before[p].body)
			}
		}
		for _, p := range recMetaPaths {
			if got := get(t, buyerAPI, p); !sameServed(got, before[p]) {
				t.Errorf("GET %s with the archive down: %d %s, before %s", p, got.status, got.body, before[p].body)
			}
		}
		// A replay answers from the metadata; with includeData it needs
		// the XML, which only the archive has.
		if status, _, b := replay("archivo-1", false); status != 200 || !bytes.Equal(b, replayedMeta) {
			t.Errorf("the send replayed with the archive down: %d %s, want the answer before %s", status, b, replayedMeta)
		}
		status, h, b := replay("archivo-1", true)
		checkArchiveUnavailable(t, "the send replayed with includeData", status, h, b)

		// A document settled meanwhile is kept whole: it cannot be
		// archived, so it is not dropped.
		issueTo(t, supplier, buyerID, "archivo-3")
		fresh = sentDocument(t, supplier, buyerID, "archivo-3").Clave
		record(supplier, append(docPaths(fresh), "/api/documents/v4"), keeps(fresh))
		time.Sleep(3 * archiveAfter) // sweeps that find the archive down
		d, err := store.DocumentByClave(ctx, fresh)
		if err != nil {
			t.Fatal(err)
		}
		if d.PartsDropped() || len(d.ResponseXML) == 0 {
			t.Errorf("the document settled with the archive down lost its parts: signed %d bytes, answer %d", len(d.SignedXML), len(d.ResponseXML))
		}
		// Its failures are counted and it is passed over for a while
		// (read here past any deferral).
		rows, err := store.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, time.Now().Add(archivesweep.MaxBackoff+time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Clave != fresh || rows[0].Failures == 0 {
			t.Errorf("unarchived rows with the archive down: %+v, want only %s, with its failures", rows, fresh)
		}
		metric := adminMetric(t, adminAddr, `facturad_archive_reads_total{outcome="unavailable"}`)
		if metric == "" || metric == "0" {
			t.Errorf("facturad_archive_reads_total{outcome=\"unavailable\"} = %q after reads the archive could not answer", metric)
		}
	})
	if fresh == "" {
		t.Fatalf("the archive-down steps failed:\n%s", out.String())
	}

	// Back, on the same data: everything is served again, and what
	// waited is archived and dropped.
	weed.Start()
	deadline := time.Now().Add(time.Minute)
	for p := docPaths(claves[0])[0]; ; time.Sleep(200 * time.Millisecond) {
		if got := get(t, supplier, p); got.status == 200 || time.Now().After(deadline) {
			break
		}
	}
	t.Run("archive back", func(t *testing.T) {
		checkServed(t, "with the archive back")
		waitDropped(t, store, []string{fresh}, 0, "")
		for _, p := range docPaths(fresh) {
			if got := get(t, supplier, p); !sameServed(got, before[p]) {
				t.Errorf("GET %s once archived and dropped: %d (%d bytes), before %d (%d bytes)", p, got.status, len(got.body), before[p].status, len(before[p].body))
			}
		}
	})
}

// sentDocument reads the supplier's document of id_externo id back by its
// replay (a send of the same request answers the stored document).
func sentDocument(t *testing.T, supplier apiClient, buyerID, id string) document {
	t.Helper()
	var d document
	supplier.json("POST", "/api/documents/v4", issueBody(buyerID, id), 200, &d)
	if d.Estado != "01" || len(d.Clave) != 50 {
		t.Fatalf("document %s: %+v", id, d)
	}
	return d
}

// get makes a GET call and returns what it served, the status included.
func get(t *testing.T, c apiClient, path string) served {
	t.Helper()
	status, h, b, err := c.try(checkedHTTP(t), c.base, "GET", path, "", nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return served{status, h.Get("Content-Type"), b}
}

func sameServed(a, b served) bool {
	return a.status == b.status && a.ctype == b.ctype && bytes.Equal(a.body, b.body)
}

// checkArchiveUnavailable fails t unless an answer is the contract's 503
// with a Retry-After: the A.7 error form, its message saying to try again.
func checkArchiveUnavailable(t *testing.T, what string, status int, h http.Header, b []byte) {
	t.Helper()
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "30" {
		t.Errorf("%s with the archive down: %d, Retry-After %q: %s", what, status, h.Get("Retry-After"), b)
		return
	}
	var e struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Message, "try again later") {
		t.Errorf("%s with the archive down: the body is not the error form: %s (%v)", what, b, err)
	}
}

// waitDropped waits until the store has dropped its copy of the issued
// documents claves and, when companyID is set, of the company's received
// document recClave: archived first, then dropped once archive_after has
// passed.
func waitDropped(t *testing.T, store archivedStore, claves []string, companyID int64, recClave string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var waiting []string
		for _, c := range claves {
			d, err := store.DocumentByClave(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if !d.PartsDropped() || len(d.ResponseXML) != 0 {
				waiting = append(waiting, c)
			}
		}
		if companyID != 0 {
			r, err := store.ReceivedByClave(ctx, companyID, recClave)
			if err != nil {
				t.Fatal(err)
			}
			if !r.PartsDropped() || len(r.SignedXML) != 0 || len(r.ResponseXML) != 0 {
				waiting = append(waiting, "received "+recClave)
			}
		}
		if len(waiting) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still kept in the store after 2 minutes: %v", waiting)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// adminMetric reads one sample's value from the admin listener's
// /metrics ("" when absent).
func adminMetric(t *testing.T, adminAddr, sample string) string {
	t.Helper()
	for _, l := range strings.Split(metricsText(t, adminAddr), "\n") {
		if v, ok := strings.CutPrefix(l, sample+" "); ok {
			return v
		}
	}
	return ""
}

// exportEntries exports the company's last hour through the client c and
// returns the ZIP's entries by name.
func exportEntries(t *testing.T, c apiClient, companyID int64) map[string][]byte {
	t.Helper()
	cl, err := client.New(c.base, client.WithCredentials(c.user, c.pass, c.token), client.WithHTTPClient(checkedHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	body, err := cl.Export(context.Background(), companyID, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	raw, err := io.ReadAll(body)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("read the export: %v", err)
	}
	z, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("the export is no ZIP: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("entry %s: %v", f.Name, err)
		}
		out[f.Name] = b
	}
	return out
}
