package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// DocumentStore is what the document suite needs: a tenant.Store to create
// the companies and branches that documents belong to, and the
// tenant.DocumentStore under test. Both adapters are one.
type DocumentStore interface {
	tenant.Store
	tenant.DocumentStore
}

// RunDocuments checks every behaviour of the tenant.DocumentStore contract
// as subtests. open must return a fresh, empty, migrated store for each
// call and arrange its cleanup with t.Cleanup.
func RunDocuments(t *testing.T, open func(t *testing.T) DocumentStore) {
	contract[DocumentStore]{
		{"ok/reserve and read back every field", testDocumentRoundTrip},
		{"ok/save replaces the mutable fields only", testDocumentSave},
		{"ok/a state read leaves the parts out, and its save keeps them", testDocumentStateRead},
		{"ok/empty values round-trip", testDocumentEmptyValues},
		{"ok/detalle mensaje round-trips", testDocumentDetalle},
		{"ok/sequences are per branch terminal and tipo", testDocumentSequences},
		{"ok/a move starts the numbering where the new environment left it", testDocumentSequencesMove},
		{"ok/concurrent reserve hands out consecutive numbers", testDocumentConcurrentReserve},
		{"error/id externo taken in the branch takes no number", testDocumentExternalIDConflict},
		{"error/concurrent reserves of one id externo: one wins", testDocumentExternalIDRace},
		{"error/clave taken takes no number", testDocumentClaveConflict},
		{"error/save with a taken clave", testDocumentSaveClaveConflict},
		{"ok/a caller's clave keeps its number and raises the sequence", testDocumentCallerNumber},
		{"error/consecutivo taken in the branch", testDocumentConsecutivoConflict},
		{"error/save of a stale copy loses no update", testDocumentSaveStale},
		{"error/concurrent saves of one version: one wins", testDocumentSaveRace},
		{"error/reserve for a missing or foreign branch", testDocumentBadBranch},
		{"error/reserve or save invalid input", testDocumentInvalid},
		{"error/document missing", testDocumentMissing},
		{"ok/claim order limit and states", testDocumentClaimOrder},
		{"ok/claim lease", testDocumentClaimLease},
		{"error/claim arguments", testDocumentClaimArgs},
		{"ok/concurrent claims never share a document", testDocumentConcurrentClaims},
		{"error/a refused claim on a document takes no number", testClaimsRefusalTakesNoNumber},
		{"error/racing claims on a document never exceed it", testClaimsRace},
		{"error/a claim under a taken id_externo is a conflict, not a refusal", testClaimsRepeatIsConflict},
	}.run(t, open)
}

// RunDocumentReplicas checks that two stores on one database, as two
// replicas of the service hold them, never hand out the same number and
// never claim the same document. open returns both, fresh and migrated, and
// arranges their cleanup.
func RunDocumentReplicas(t *testing.T, open func(t *testing.T) (DocumentStore, DocumentStore)) {
	t.Run("ok/replicas reserve consecutive numbers", func(t *testing.T) {
		a, b := open(t)
		f := newDocFixture(t, a)
		const perStore, workers, each = 2, 8, 25
		got := reserveConcurrently(t, []DocumentStore{a, b}, workers, each, func(w, i int) tenant.Document {
			return minimalDocument(f.Branch, fmt.Sprintf("replica-%d-%d", w, i), "01", "00001")
		})
		checkConsecutive(t, got, perStore*workers*each)
	})
	t.Run("ok/replicas never claim the same document", func(t *testing.T) {
		a, b := open(t)
		claimConcurrently(t, []DocumentStore{a, b})
	})
}

// docFixture is a company with two branches, made through the tenant.Store.
type docFixture struct {
	Company         tenant.Company
	Branch, Branch2 tenant.Branch
}

func newDocFixture(tb testing.TB, s tenant.Store) docFixture {
	tb.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	if err != nil {
		tb.Fatalf("NextCompanyID: %v", err)
	}
	c, b, u := company(id, fmt.Sprintf("Documentos %d S.A.", id)), branch("001"), user(fmt.Sprintf("docs-%d-001", id))
	if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
		tb.Fatalf("CreateCompany: %v", err)
	}
	b2, u2 := branch("002"), user(fmt.Sprintf("docs-%d-002", id))
	b2.CompanyID = id
	if err := s.CreateBranch(ctx, &b2, &u2); err != nil {
		tb.Fatalf("CreateBranch: %v", err)
	}
	return docFixture{c, b, b2}
}

// minimalDocument is a document as the pipeline reserves it: numbered before
// it has a clave, a consecutivo or a signature.
func minimalDocument(b tenant.Branch, idExterno, tipo, terminal string) tenant.Document {
	return tenant.Document{
		CompanyID:  b.CompanyID,
		BranchID:   b.ID,
		Ambiente:   tenant.AmbientePruebas,
		IDExterno:  idExterno,
		Tipo:       tipo,
		Terminal:   terminal,
		Situacion:  "1",
		Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending},
	}
}

// fullDocument sets every field the caller may set, each to a value of its
// own, with binary XML-sized payloads and times that carry microseconds.
func fullDocument(b tenant.Branch, idExterno string, seed byte) tenant.Document {
	h := sha256.Sum256([]byte("request " + idExterno))
	return tenant.Document{
		CompanyID:      b.CompanyID,
		BranchID:       b.ID,
		Ambiente:       tenant.AmbientePruebas,
		IDExterno:      idExterno,
		RequestHash:    h[:],
		Request:        []byte(`{"id_externo":"` + idExterno + `","detalle":"«línea» \u0000?"}`),
		Tipo:           "01",
		Terminal:       "00007",
		Numero:         1, // the clave's own number
		Consecutivo:    "00100007010000000001",
		Clave:          fmt.Sprintf("506020126003101%06d0010000701000000000119876543%d", b.CompanyID%1000000, seed%10),
		Situacion:      "1",
		FechaEmision:   time.Date(2026, 1, 2, 3, 4, 5, 678901000, hacienda.CostaRica),
		EmisorTipo:     "02",
		EmisorNumero:   "3101123456",
		ReceptorTipo:   "01",
		ReceptorNumero: "109870654",
		Submission: tenant.Submission{
			Phase:           tenant.PhaseSubmitted,
			Estado:          tenant.StateSent,
			SignedXML:       binaryPayload(300<<10, seed),
			IndEstado:       "procesando",
			CodigoMensaje:   "3",
			MensajeHacienda: "Rechazado «total» 'mal' \"calculado\"",
			DetalleMensaje:  []string{"Línea 1: el total no coincide", "", `{"a":[1,2]}`, "NULL", "a,b\\c\t\"d\"\nsegunda línea"},
			ResponseXML:     binaryPayload(40<<10, seed+1),
			LastError:       "post /recepcion: 503 Service Unavailable",
			Attempts:        3,
			NextAttemptAt:   time.Date(2026, 1, 2, 3, 9, 0, 1000, time.UTC),
			SubmittedAt:     time.Date(2026, 1, 2, 3, 4, 6, 999999000, hacienda.CostaRica),
			CheckedAt:       time.Date(2026, 1, 2, 3, 5, 0, 500000000, time.UTC),
		},
	}
}

// binaryPayload is n bytes holding every byte value, NUL included.
func binaryPayload(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7) ^ seed
	}
	return p
}

// checkStoredTimes fails the test when a time of d is not UTC.
func checkStoredTimes(t *testing.T, what string, d tenant.Document) {
	t.Helper()
	for name, ts := range map[string]time.Time{
		"FechaEmision": d.FechaEmision, "NextAttemptAt": d.NextAttemptAt,
		"SubmittedAt": d.SubmittedAt, "CheckedAt": d.CheckedAt,
		"CreatedAt": d.CreatedAt, "UpdatedAt": d.UpdatedAt,
	} {
		if !ts.IsZero() && !isUTC(ts) {
			t.Errorf("%s: %s %v is not UTC", what, name, ts)
		}
	}
}

// readBoth reads d back by clave (when it has one) and by id_externo and
// compares both with want.
func readBoth(t *testing.T, s DocumentStore, what string, want tenant.Document) {
	t.Helper()
	ctx := context.Background()
	got, err := s.DocumentByExternalID(ctx, want.BranchID, want.IDExterno)
	mustNot(t, what+": DocumentByExternalID", err)
	same(t, what+" by id_externo", want, got)
	checkStoredTimes(t, what, got)
	if want.Clave != "" {
		got, err := s.DocumentByClave(ctx, want.Clave)
		mustNot(t, what+": DocumentByClave", err)
		same(t, what+" by clave", want, got)
	}
}

func testDocumentRoundTrip(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := fullDocument(f.Branch, "pedido-1", 1)
	in := d
	before := time.Now()
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	after := time.Now()

	if d.ID <= 0 || d.Numero != 1 {
		t.Fatalf("ReserveDocument set ID %d and Numero %d, want a positive id and number 1", d.ID, d.Numero)
	}
	if d.CreatedAt.Before(before.Add(-time.Millisecond)) || d.CreatedAt.After(after) || !d.UpdatedAt.Equal(d.CreatedAt) {
		t.Errorf("CreatedAt %v, UpdatedAt %v outside [%v, %v]", d.CreatedAt, d.UpdatedAt, before, after)
	}
	in.ID, in.Numero, in.CreatedAt, in.UpdatedAt = d.ID, d.Numero, d.CreatedAt, d.UpdatedAt
	in.From = in.Phase // the phase it is stored in
	same(t, "document set by reserve", in, d)
	readBoth(t, s, "reserved document", in)
}

func testDocumentSave(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := minimalDocument(f.Branch, "pedido-1", "01", "00001")
	d.RequestHash = []byte{1, 2, 3}
	d.Request = []byte(`{"id_externo":"pedido-1"}`)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	orig := d

	// Every mutable field changes; the immutable ones are sent changed too
	// and must be kept.
	full := fullDocument(f.Branch, "otro", 9)
	full.ID = d.ID
	full.CompanyID, full.BranchID = f.Branch2.CompanyID+1000, f.Branch2.ID
	full.RequestHash = []byte{9, 9, 9}
	full.Request = []byte(`{"changed":true}`)
	full.Tipo, full.Terminal, full.Numero = "04", "00009", 777
	full.Ambiente = tenant.AmbienteProduccion
	full.CreatedAt = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	full.Place(tenant.StateError)    // a phase the save below may leave
	full.UpdatedAt = d.UpdatedAt     // as read
	full.From = d.From               // the phase read
	time.Sleep(2 * time.Millisecond) // UpdatedAt must move
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &full))
	if !full.UpdatedAt.After(orig.UpdatedAt) {
		t.Errorf("UpdatedAt %v not after the reserve's %v", full.UpdatedAt, orig.UpdatedAt)
	}

	want := full
	want.CompanyID, want.BranchID, want.IDExterno, want.RequestHash = orig.CompanyID, orig.BranchID, orig.IDExterno, orig.RequestHash
	want.Request = orig.Request // kept from numbering on
	want.Tipo, want.Terminal, want.Numero, want.CreatedAt = orig.Tipo, orig.Terminal, orig.Numero, orig.CreatedAt
	want.Ambiente = orig.Ambiente
	readBoth(t, s, "saved document", want)

	// And back to empty values: a save is a full replace, but for the
	// large parts, which a save without them keeps.
	empty := minimalDocument(f.Branch, orig.IDExterno, orig.Tipo, orig.Terminal)
	empty.ID, empty.RequestHash, empty.Numero, empty.CreatedAt = orig.ID, orig.RequestHash, orig.Numero, orig.CreatedAt
	empty.Request = orig.Request
	empty.UpdatedAt, empty.From = full.UpdatedAt, full.From // as the save left it
	empty.Situacion = ""
	mustNot(t, "SaveDocument to empty", s.SaveDocument(ctx, &empty))
	want = empty
	want.SignedXML, want.ResponseXML = full.SignedXML, full.ResponseXML
	readBoth(t, s, "emptied document", want)

	// Parts that come with a save replace the stored ones.
	other := empty
	other.SignedXML, other.ResponseXML = binaryPayload(1000, 77), binaryPayload(500, 78)
	mustNot(t, "SaveDocument with other parts", s.SaveDocument(ctx, &other))
	readBoth(t, s, "document with other parts", other)
	if _, err := s.DocumentByClave(ctx, full.Clave); err == nil {
		t.Errorf("the old clave %s still finds the document", full.Clave)
	}
}

func testDocumentStateRead(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := fullDocument(f.Branch, "estado", 1)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))

	got, err := s.DocumentStateByClave(ctx, d.Clave)
	mustNot(t, "DocumentStateByClave", err)
	want := d
	want.Request, want.SignedXML, want.ResponseXML = nil, nil, nil
	same(t, "state read", want, got)

	got.Place(tenant.StateAccepted)
	got.CodigoMensaje = "1"
	mustNot(t, "SaveDocument of the state read", s.SaveDocument(ctx, &got))
	d.Submission.Phase, d.Estado, d.From = got.Phase, got.Estado, got.From
	d.CodigoMensaje, d.UpdatedAt = got.CodigoMensaje, got.UpdatedAt
	readBoth(t, s, "after saving the state read", d)

	_, err = s.DocumentStateByClave(ctx, strings.Repeat("5", 50))
	wantErr(t, "DocumentStateByClave unknown", err, tenant.ErrNotFound)
	_, err = s.DocumentStateByClave(ctx, "")
	wantErr(t, "DocumentStateByClave empty", err, tenant.ErrNotFound)
}

func testDocumentEmptyValues(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := tenant.Document{
		CompanyID:  f.Company.ID,
		BranchID:   f.Branch.ID,
		IDExterno:  "x",
		Tipo:       "01",
		Terminal:   "00001",
		Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending},
	}
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
	mustNot(t, "DocumentByExternalID", err)
	same(t, "empty document", d, got)
	for name, ts := range map[string]time.Time{
		"FechaEmision": got.FechaEmision, "NextAttemptAt": got.NextAttemptAt,
		"SubmittedAt": got.SubmittedAt, "CheckedAt": got.CheckedAt,
	} {
		if !ts.IsZero() {
			t.Errorf("zero %s came back as %v", name, ts)
		}
	}
	for name, b := range map[string][]byte{"RequestHash": got.RequestHash, "Request": got.Request, "SignedXML": got.SignedXML, "ResponseXML": got.ResponseXML} {
		if len(b) != 0 {
			t.Errorf("empty %s came back with %d bytes", name, len(b))
		}
	}
}

func testDocumentDetalle(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	tests := []struct {
		name  string
		lines []string
	}{
		{"ok/nil", nil},
		{"ok/empty", []string{}},
		{"ok/one empty line", []string{""}},
		{"ok/one line", []string{"Este comprobante fue aceptado"}},
		{"ok/awkward characters", []string{`comillas "dobles" y 'simples'`, "llaves {} [] ,", `barra \ invertida`, "NULL", "null", " espacios ", "ñáéíóú «»", "<b>&amp;</b>", "tab\tand\nnewline"}},
		{"ok/many lines", slices.Repeat([]string{"línea"}, 200)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := minimalDocument(f.Branch, fmt.Sprintf("detalle-%d", i), "01", "00001")
			d.DetalleMensaje = tt.lines
			mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
			got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
			mustNot(t, "DocumentByExternalID", err)
			if !equalLines(tt.lines, got.DetalleMensaje) {
				t.Errorf("reserved %#v, read back %#v", tt.lines, got.DetalleMensaje)
			}
			// And through a save, from the other kind of empty.
			other := []string{"x"}
			if tt.lines == nil {
				other = []string{}
			}
			d.DetalleMensaje = other
			mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
			d.DetalleMensaje = tt.lines
			mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
			got, err = s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
			mustNot(t, "DocumentByExternalID", err)
			if !equalLines(tt.lines, got.DetalleMensaje) {
				t.Errorf("saved %#v, read back %#v", tt.lines, got.DetalleMensaje)
			}
		})
	}
}

// equalLines is slices.Equal that also tells nil from empty.
func equalLines(a, b []string) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

func testDocumentSequences(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	// Reserved in this order; each wants the number its own sequence gives.
	steps := []struct {
		branch   tenant.Branch
		terminal string
		tipo     string
		want     int64
	}{
		{f.Branch, "00001", "01", 1},
		{f.Branch, "00001", "01", 2},
		{f.Branch, "00001", "04", 1},
		{f.Branch, "00002", "01", 1},
		{f.Branch2, "00001", "01", 1},
		{f.Branch, "00001", "01", 3},
		{f.Branch, "00001", "04", 2},
		{f.Branch2, "00001", "01", 2},
		{f.Branch2, "00001", "03", 1},
		{f.Branch, "00002", "01", 2},
		{f.Branch, "00001", "01", 4},
	}
	for i, st := range steps {
		d := minimalDocument(st.branch, fmt.Sprintf("seq-%d", i), st.tipo, st.terminal)
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		if d.Numero != st.want {
			t.Errorf("step %d: branch %s terminal %s tipo %s got number %d, want %d",
				i, st.branch.Sucursal, st.terminal, st.tipo, d.Numero, st.want)
		}
		got, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		mustNot(t, "DocumentByExternalID", err)
		if got.Numero != d.Numero || got.Tipo != st.tipo || got.Terminal != st.terminal {
			t.Errorf("step %d: stored number %d tipo %s terminal %s, reserved %d", i, got.Numero, got.Tipo, got.Terminal, d.Numero)
		}
	}
}

// reserveConcurrently runs workers goroutines per store, each reserving
// each documents made by mk, and returns every document reserved.
func reserveConcurrently(t *testing.T, stores []DocumentStore, workers, each int, mk func(w, i int) tenant.Document) []tenant.Document {
	t.Helper()
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		made []tenant.Document
	)
	errs := make(chan error, len(stores)*workers)
	for si, s := range stores {
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					d := mk(si*workers+w, i)
					if err := s.ReserveDocument(ctx, &d); err != nil {
						errs <- fmt.Errorf("store %d worker %d: ReserveDocument %q: %w", si, w, d.IDExterno, err)
						return
					}
					mu.Lock()
					made = append(made, d)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	return made
}

// checkConsecutive fails the test unless docs (one sequence) hold the
// numbers 1..n, each once, and each is stored with its number.
func checkConsecutive(t *testing.T, docs []tenant.Document, n int) {
	t.Helper()
	if len(docs) != n {
		t.Fatalf("%d documents reserved, want %d", len(docs), n)
	}
	nums := make([]int64, 0, n)
	ids := map[int64]bool{}
	for _, d := range docs {
		nums = append(nums, d.Numero)
		if ids[d.ID] {
			t.Errorf("id %d handed out twice", d.ID)
		}
		ids[d.ID] = true
	}
	slices.Sort(nums)
	for i, got := range nums {
		if got != int64(i+1) {
			t.Fatalf("sorted numbers differ at %d: got %d, want %d (a number twice or a gap)", i, got, i+1)
		}
	}
}

func testDocumentConcurrentReserve(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	const workers, each = 16, 50
	// Every other document goes to a second sequence, which must stay
	// independent under load.
	got := reserveConcurrently(t, []DocumentStore{s}, workers, each, func(w, i int) tenant.Document {
		return minimalDocument(f.Branch, fmt.Sprintf("c-%d-%d", w, i), "01", "00001")
	})
	checkConsecutive(t, got, workers*each)
	for _, d := range got[:10] {
		stored, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
		mustNot(t, "DocumentByExternalID", err)
		if stored.Numero != d.Numero || stored.ID != d.ID {
			t.Errorf("document %q stored with number %d id %d, reserve said %d id %d", d.IDExterno, stored.Numero, stored.ID, d.Numero, d.ID)
		}
	}

	// Two sequences at once: each consecutive on its own.
	got = reserveConcurrently(t, []DocumentStore{s}, 8, 20, func(w, i int) tenant.Document {
		tipo := []string{"02", "03"}[(w+i)%2]
		return minimalDocument(f.Branch, fmt.Sprintf("m-%d-%d", w, i), tipo, "00001")
	})
	bySeq := map[string][]tenant.Document{}
	for _, d := range got {
		bySeq[d.Tipo] = append(bySeq[d.Tipo], d)
	}
	checkConsecutive(t, bySeq["02"], 80)
	checkConsecutive(t, bySeq["03"], 80)
}

func testDocumentExternalIDConflict(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := minimalDocument(f.Branch, "pedido-7", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))

	tests := []struct {
		name string
		doc  tenant.Document
	}{
		{"error/same sequence", minimalDocument(f.Branch, "pedido-7", "01", "00001")},
		{"error/another tipo", minimalDocument(f.Branch, "pedido-7", "04", "00001")},
		{"error/another terminal", minimalDocument(f.Branch, "pedido-7", "01", "00002")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.doc
			err := s.ReserveDocument(ctx, &d)
			wantErr(t, "ReserveDocument of a taken id_externo", err, tenant.ErrConflict)
			if d.ID != 0 || d.Numero != 0 {
				t.Errorf("failed reserve set ID %d Numero %d", d.ID, d.Numero)
			}
		})
	}
	// The stored document is untouched.
	got, err := s.DocumentByExternalID(ctx, f.Branch.ID, "pedido-7")
	mustNot(t, "DocumentByExternalID", err)
	same(t, "first document after the conflicts", first, got)

	// No number was consumed: each sequence goes on where it was, so the
	// failed inserts rolled their step back.
	for _, st := range []struct {
		tipo, terminal string
		want           int64
	}{{"01", "00001", 2}, {"04", "00001", 1}, {"01", "00002", 1}} {
		d := minimalDocument(f.Branch, "siguiente-"+st.tipo+st.terminal, st.tipo, st.terminal)
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		if d.Numero != st.want {
			t.Errorf("tipo %s terminal %s: next number %d, want %d (a conflict consumed a number)", st.tipo, st.terminal, d.Numero, st.want)
		}
	}

	// The same id_externo in another branch is another document.
	other := minimalDocument(f.Branch2, "pedido-7", "01", "00001")
	mustNot(t, "ReserveDocument in another branch", s.ReserveDocument(ctx, &other))
	if other.Numero != 1 || other.ID == first.ID {
		t.Errorf("other branch: number %d id %d (first id %d), want number 1 and a new id", other.Numero, other.ID, first.ID)
	}
	got, err = s.DocumentByExternalID(ctx, f.Branch2.ID, "pedido-7")
	mustNot(t, "DocumentByExternalID", err)
	if got.ID != other.ID {
		t.Errorf("branch 002's pedido-7 is document %d, want %d", got.ID, other.ID)
	}
	got, err = s.DocumentByExternalID(ctx, f.Branch.ID, "pedido-7")
	mustNot(t, "DocumentByExternalID", err)
	if got.ID != first.ID {
		t.Errorf("branch 001's pedido-7 is document %d, want %d", got.ID, first.ID)
	}
}

// Clients retry: the same request may arrive on several connections at
// once. Exactly one reserve wins; the others are ErrConflict and consume no
// number.
func testDocumentExternalIDRace(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	const racers = 12
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []tenant.Document
		lost int
	)
	errs := make(chan error, racers)
	for range racers {
		wg.Go(func() {
			d := minimalDocument(f.Branch, "carrera", "01", "00001")
			err := s.ReserveDocument(ctx, &d)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, d)
			case errors.Is(err, tenant.ErrConflict):
				lost++
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("ReserveDocument: %v", err)
	}
	if len(won) != 1 || lost != racers-1 {
		t.Fatalf("%d reserves won and %d got ErrConflict, want 1 and %d", len(won), lost, racers-1)
	}
	if won[0].Numero != 1 {
		t.Errorf("the winner got number %d, want 1", won[0].Numero)
	}
	d := minimalDocument(f.Branch, "despues", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	if d.Numero != 2 {
		t.Errorf("next number %d, want 2 (a losing reserve consumed a number)", d.Numero)
	}
}

func testDocumentClaveConflict(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := fullDocument(f.Branch, "con-clave", 1)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))

	// A caller-supplied clave already taken, in any branch.
	for _, b := range []tenant.Branch{f.Branch, f.Branch2} {
		d := minimalDocument(b, "otra-"+b.Sucursal, first.Tipo, first.Terminal)
		d.Clave, d.Numero = first.Clave, first.Numero
		err := s.ReserveDocument(ctx, &d)
		wantErr(t, "ReserveDocument with a taken clave in branch "+b.Sucursal, err, tenant.ErrConflict)
		if _, err := s.DocumentByExternalID(ctx, b.ID, d.IDExterno); err == nil {
			t.Errorf("the refused document %q was stored", d.IDExterno)
		}
	}
	// No number consumed.
	d := minimalDocument(f.Branch, "siguiente", first.Tipo, first.Terminal)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	if d.Numero != 2 {
		t.Errorf("next number %d, want 2 (a clave conflict consumed a number)", d.Numero)
	}
	d2 := minimalDocument(f.Branch2, "siguiente", first.Tipo, first.Terminal)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d2))
	if d2.Numero != 1 {
		t.Errorf("branch 002 next number %d, want 1", d2.Numero)
	}
	// Documents without a clave never conflict with each other.
	if d.Clave != "" || d2.Clave != "" {
		t.Fatal("fixture documents have a clave")
	}
	_, err := s.DocumentByClave(ctx, "")
	wantErr(t, "DocumentByClave of the empty clave", err, tenant.ErrNotFound)
}

func testDocumentSaveClaveConflict(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := fullDocument(f.Branch, "primero", 1)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))
	second := minimalDocument(f.Branch2, "segundo", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &second))
	before := second

	upd := second
	upd.Clave, upd.LastError = first.Clave, "changed"
	upd.Place(tenant.StateSent)
	upd.SignedXML, upd.ResponseXML = binaryPayload(3000, 31), binaryPayload(900, 32) // not written either
	err := s.SaveDocument(ctx, &upd)
	wantErr(t, "SaveDocument with a taken clave", err, tenant.ErrConflict)
	readBoth(t, s, "document after the refused save", before)
	readBoth(t, s, "clave holder after the refused save", first)

	// Saving a document with its own clave is no conflict.
	first.LastError = ""
	mustNot(t, "SaveDocument keeping its clave", s.SaveDocument(ctx, &first))
	readBoth(t, s, "clave holder after its own save", first)
}

// callerDocument is a document numbered by a caller's own clave.
func callerDocument(b tenant.Branch, idExterno string, numero int64, security string) tenant.Document {
	d := minimalDocument(b, idExterno, "01", "00001")
	d.Numero = numero
	d.Consecutivo = fmt.Sprintf("%s0000101%010d", b.Sucursal, numero)
	d.Clave = fmt.Sprintf("506020126000%09d%s1%s", b.CompanyID, d.Consecutivo, security)
	return d
}

func testDocumentCallerNumber(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	next := func(name string, want int64) {
		t.Helper()
		d := minimalDocument(f.Branch, name, "01", "00001")
		mustNot(t, "ReserveDocument "+name, s.ReserveDocument(ctx, &d))
		if d.Numero != want {
			t.Errorf("%s: number %d, want %d", name, d.Numero, want)
		}
	}
	next("servicio-1", 1)

	// A caller's clave keeps its own number; the service's next number is
	// past it.
	own := callerDocument(f.Branch, "propia-5", 5, "12345678")
	mustNot(t, "ReserveDocument with a caller's clave", s.ReserveDocument(ctx, &own))
	if own.Numero != 5 {
		t.Errorf("caller's clave stored with number %d, want its own 5", own.Numero)
	}
	readBoth(t, s, "caller-numbered document", own)
	next("servicio-6", 6)

	// A lower number of a caller neither lowers nor steps the sequence.
	low := callerDocument(f.Branch, "propia-3", 3, "12345678")
	mustNot(t, "ReserveDocument with a lower caller's number", s.ReserveDocument(ctx, &low))
	next("servicio-7", 7)

	// The same consecutivo under another security code is refused and
	// moves nothing; so is a number the service handed out.
	for _, d := range []tenant.Document{
		callerDocument(f.Branch, "misma-5", 5, "87654321"),
		callerDocument(f.Branch, "misma-7", 7, "87654321"),
	} {
		err := s.ReserveDocument(ctx, &d)
		wantErr(t, "ReserveDocument of a taken consecutivo "+d.IDExterno, err, tenant.ErrConflict)
		if _, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno); err == nil {
			t.Errorf("the refused document %q was stored", d.IDExterno)
		}
	}
	next("servicio-8", 8)

	// The other branch's sequence is its own.
	other := callerDocument(f.Branch2, "propia-otra", 5, "12345678")
	mustNot(t, "ReserveDocument in the other branch", s.ReserveDocument(ctx, &other))

	// A caller's clave without its number is refused.
	bad := callerDocument(f.Branch, "sin-numero", 9, "12345678")
	bad.Numero = 0
	if err := s.ReserveDocument(ctx, &bad); err == nil {
		t.Error("ReserveDocument accepted a caller's clave without its number")
	}
	next("servicio-9", 9)
}

func testDocumentConsecutivoConflict(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	first := minimalDocument(f.Branch, "primero", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &first))
	first.Consecutivo = "00100001010000000001"
	first.Clave = "50602012600000000310100100001010000000001112345678"
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &first))

	second := minimalDocument(f.Branch, "segundo", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &second))
	before := second
	second.Consecutivo = first.Consecutivo
	second.Clave = "50602012600000000310100100001010000000001187654321"
	err := s.SaveDocument(ctx, &second)
	wantErr(t, "SaveDocument with a consecutivo taken in the branch", err, tenant.ErrConflict)
	readBoth(t, s, "document after the refused save", before)

	// The same consecutivo in another branch is another document.
	third := minimalDocument(f.Branch2, "tercero", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &third))
	third.Consecutivo = first.Consecutivo
	third.Clave = "50602012600000000310100200001010000000001112345678"
	mustNot(t, "SaveDocument in another branch", s.SaveDocument(ctx, &third))
}

// testDocumentSaveStale saves two copies read at once, as two workers
// holding the same document would: the second is refused and the first
// one's update stays. A save applies only from the phase and the version
// the row was read at, and nothing moves a row out of a verdict.
func testDocumentSaveStale(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := minimalDocument(f.Branch, "pedido-1", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))

	a, b := d, d
	a.Submission.Phase, a.LastError = tenant.PhaseStopped, "primero"
	mustNot(t, "SaveDocument of the first copy", s.SaveDocument(ctx, &a))
	if !a.UpdatedAt.After(d.UpdatedAt) {
		t.Errorf("UpdatedAt %v not after the one read %v", a.UpdatedAt, d.UpdatedAt)
	}
	if a.From != tenant.PhaseStopped {
		t.Errorf("a save left From %s, want the phase stored", a.From)
	}
	// The refused copy carries parts of its own: none is written.
	b.Place(tenant.StateNotSentYet)
	b.LastError = "segundo"
	b.SignedXML, b.ResponseXML = binaryPayload(3000, 21), binaryPayload(900, 22)
	err := s.SaveDocument(ctx, &b)
	wantErr(t, "SaveDocument of a copy read in a phase the row left", err, tenant.ErrConflict)
	if !b.UpdatedAt.Equal(d.UpdatedAt) || b.From != d.From {
		t.Errorf("a refused save moved UpdatedAt to %v, From to %s", b.UpdatedAt, b.From)
	}
	readBoth(t, s, "document after the refused save", a)
	// The version read but another phase: refused too.
	wrong := a
	wrong.From, wrong.LastError = tenant.PhaseNumbered, "otra fase"
	wantErr(t, "SaveDocument from a phase the row is not in", s.SaveDocument(ctx, &wrong), tenant.ErrConflict)
	readBoth(t, s, "document after a save from another phase", a)

	// Read again, the update goes through; saving the same copy twice in a
	// row is fine, each save moving the version and the phase read.
	fresh, err := s.DocumentByExternalID(ctx, d.BranchID, d.IDExterno)
	mustNot(t, "DocumentByExternalID", err)
	fresh.LastError = "tercero"
	mustNot(t, "SaveDocument of a fresh copy", s.SaveDocument(ctx, &fresh))
	fresh.Place(tenant.StateAccepted)
	fresh.LastError = "cuarto"
	mustNot(t, "SaveDocument of the same copy again", s.SaveDocument(ctx, &fresh))
	readBoth(t, s, "document after two saves", fresh)
	// The first copy was read stopped: the row is accepted now.
	a.LastError = "viejo"
	wantErr(t, "SaveDocument of the first, now stale copy", s.SaveDocument(ctx, &a), tenant.ErrConflict)
	readBoth(t, s, "document after the second refused save", fresh)
	// A verdict is final: no save moves the row out of it.
	out := fresh
	out.Place(tenant.StateSent)
	wantErr(t, "SaveDocument out of a verdict", s.SaveDocument(ctx, &out), tenant.ErrFinal)
	readBoth(t, s, "document after a save out of its verdict", fresh)
}

// testDocumentSaveRace saves copies read in one phase from many
// goroutines, each moving the row out of it: exactly one wins, the others
// are ErrConflict.
func testDocumentSaveRace(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := minimalDocument(f.Branch, "pedido-1", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	const n = 8
	errs := make([]error, n)
	copies := make([]tenant.Document, n)
	var wg sync.WaitGroup
	for i := range n {
		copies[i] = d
		copies[i].Submission.Phase = tenant.PhaseStopped
		copies[i].LastError = fmt.Sprintf("copia %d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.SaveDocument(ctx, &copies[i])
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Errorf("copies %d and %d were both saved", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, tenant.ErrConflict):
			t.Errorf("copy %d: %v, want ErrConflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no copy was saved")
	}
	readBoth(t, s, "document after the race", copies[won])
}

func testDocumentBadBranch(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	other := newDocFixture(t, s)
	tests := []struct {
		name                string
		companyID, branchID int64
	}{
		{"error/missing branch", f.Company.ID, other.Branch2.ID + 1000},
		{"error/branch of another company", f.Company.ID, other.Branch.ID},
		{"error/missing company", other.Company.ID + 1000, f.Branch.ID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := minimalDocument(f.Branch, "huerfano", "01", "00001")
			d.CompanyID, d.BranchID = tt.companyID, tt.branchID
			err := s.ReserveDocument(ctx, &d)
			wantErr(t, "ReserveDocument", err, tenant.ErrNotFound)
		})
	}
	// Nothing was numbered meanwhile.
	for _, b := range []tenant.Branch{f.Branch, other.Branch} {
		d := minimalDocument(b, "primero", "01", "00001")
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
		if d.Numero != 1 {
			t.Errorf("branch %d: first number %d, want 1", b.ID, d.Numero)
		}
	}
}

func testDocumentInvalid(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	tests := []struct {
		name   string
		change func(d *tenant.Document)
	}{
		{"error/no company", func(d *tenant.Document) { d.CompanyID = 0 }},
		{"error/no branch", func(d *tenant.Document) { d.BranchID = 0 }},
		{"error/no tipo", func(d *tenant.Document) { d.Tipo = "" }},
		{"error/no terminal", func(d *tenant.Document) { d.Terminal = "" }},
		{"error/no phase", func(d *tenant.Document) { d.Submission.Phase = "" }},
		{"error/unknown estado", func(d *tenant.Document) { d.Estado = "06" }},
		{"error/estado of another phase", func(d *tenant.Document) { d.Estado = tenant.StateAccepted }},
		{"error/negative attempts", func(d *tenant.Document) { d.Attempts = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := minimalDocument(f.Branch, "invalido", "01", "00001")
			tt.change(&d)
			if err := s.ReserveDocument(ctx, &d); err == nil {
				t.Fatal("ReserveDocument accepted it")
			}
		})
	}
	good := minimalDocument(f.Branch, "valido", "01", "00001")
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &good))
	if good.Numero != 1 {
		t.Errorf("first valid document got number %d, want 1", good.Numero)
	}
	bad := good
	bad.Place("99")
	if err := s.SaveDocument(ctx, &bad); err == nil {
		t.Error("SaveDocument accepted estado 99")
	}
	readBoth(t, s, "document after a refused save", good)
}

func testDocumentMissing(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := fullDocument(f.Branch, "existe", 1)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))

	_, err := s.DocumentByClave(ctx, strings.Repeat("5", 50))
	wantErr(t, "DocumentByClave unknown", err, tenant.ErrNotFound)
	_, err = s.DocumentByClave(ctx, "")
	wantErr(t, "DocumentByClave empty", err, tenant.ErrNotFound)
	_, err = s.DocumentByExternalID(ctx, f.Branch.ID, "no-existe")
	wantErr(t, "DocumentByExternalID unknown", err, tenant.ErrNotFound)
	_, err = s.DocumentByExternalID(ctx, f.Branch2.ID, "existe")
	wantErr(t, "DocumentByExternalID of another branch", err, tenant.ErrNotFound)
	_, err = s.DocumentByExternalID(ctx, f.Branch.ID, "")
	wantErr(t, "DocumentByExternalID empty", err, tenant.ErrNotFound)
	ghost := d
	ghost.ID = d.ID + 1000
	ghost.Clave = strings.Repeat("4", 50)
	err = s.SaveDocument(ctx, &ghost)
	wantErr(t, "SaveDocument unknown id", err, tenant.ErrNotFound)
}

// dueDocument is a document in state st waiting for an attempt at next.
func dueDocument(b tenant.Branch, name string, st tenant.State, next time.Time) tenant.Document {
	d := minimalDocument(b, name, "01", "00001")
	d.Place(st)
	d.NextAttemptAt = next
	return d
}

// documentClaims is the claim of s's due documents.
func documentClaims(s DocumentStore) claiming[tenant.Document] {
	return claiming[tenant.Document]{
		name: "ClaimDueDocuments", noun: "document", claim: s.ClaimDueDocuments,
		row:   func(d tenant.Document) (string, time.Time) { return d.IDExterno, d.NextAttemptAt },
		whole: func(t *testing.T, d tenant.Document) { t.Helper(); checkStoredTimes(t, "claimed "+d.IDExterno, d) },
	}
}

func testDocumentClaimOrder(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	docs := make([]tenant.Document, len(claimOrderRows))
	for i, r := range claimOrderRows {
		docs[i] = dueDocument([]tenant.Branch{f.Branch, f.Branch2}[r.branch], r.name, r.estado, r.next)
		mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &docs[i]))
	}
	lease := claimBase.Add(5 * time.Minute)
	c := documentClaims(s)
	c.checkOrder(t, lease)
	// The lease is stored, and nothing else changed.
	d, err := s.DocumentByExternalID(ctx, f.Branch.ID, "a-05-3m")
	mustNot(t, "DocumentByExternalID", err)
	if !d.NextAttemptAt.Equal(lease) {
		t.Errorf("stored NextAttemptAt %v, want the lease end %v", d.NextAttemptAt, lease)
	}
	if !d.UpdatedAt.Equal(docs[3].UpdatedAt) || d.Attempts != 0 || d.Estado != tenant.StateNotSentYet {
		t.Errorf("a claim changed more than NextAttemptAt: %+v", d)
	}
	c.checkNeverClaimed(t)
}

func testDocumentClaimLease(t *testing.T, s DocumentStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	now := claimBase
	d := dueDocument(f.Branch, "arrendado", tenant.StateNotSentYet, now.Add(-time.Second))
	d.Request, d.SignedXML, d.ResponseXML = []byte(`{"id_externo":"arrendado"}`), binaryPayload(5000, 41), binaryPayload(700, 42)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	lease := now.Add(30 * time.Second)

	// A claimed document comes whole, its parts with it: the worker
	// submits the signed XML it claims.
	claimed, err := s.ClaimDueDocuments(ctx, now, lease, 10)
	mustNot(t, "ClaimDueDocuments", err)
	if len(claimed) != 1 {
		t.Fatalf("claimed %d documents, want 1", len(claimed))
	}
	want := d
	want.NextAttemptAt = lease
	same(t, "claimed document", want, claimed[0])
	// Back to due, for the steps below.
	claimed[0].NextAttemptAt = d.NextAttemptAt
	mustNot(t, "SaveDocument", s.SaveDocument(ctx, &claimed[0]))
	d = claimed[0]

	documentClaims(s).checkLease(t, now, lease, func(st tenant.State, next time.Time, attempts int) {
		d.Place(st)
		d.NextAttemptAt, d.Attempts = next, attempts
		mustNot(t, "SaveDocument", s.SaveDocument(ctx, &d))
	})
}

func testDocumentClaimArgs(t *testing.T, s DocumentStore) {
	f := newDocFixture(t, s)
	d := dueDocument(f.Branch, "pendiente", tenant.StateSent, claimBase.Add(-time.Second))
	mustNot(t, "ReserveDocument", s.ReserveDocument(context.Background(), &d))
	documentClaims(s).checkArgs(t, claimBase)
}

// claimConcurrently makes due documents through stores[0] and has several
// goroutines per store claim them in small batches at once; every due
// document must be claimed exactly once.
func claimConcurrently(t *testing.T, stores []DocumentStore) {
	t.Helper()
	ctx := context.Background()
	f := newDocFixture(t, stores[0])
	now := claimBase
	due := map[int64]bool{}
	for i := range 150 {
		st := []tenant.State{tenant.StateSent, tenant.StateNotSentYet}[i%2]
		b := []tenant.Branch{f.Branch, f.Branch2}[i%3%2]
		d := dueDocument(b, fmt.Sprintf("due-%d", i), st, now.Add(-time.Duration(i%7)*time.Second))
		mustNot(t, "ReserveDocument", stores[0].ReserveDocument(ctx, &d))
		due[d.ID] = true
		// Some that must never be claimed.
		if i%10 == 0 {
			n := dueDocument(b, fmt.Sprintf("not-due-%d", i), st, now.Add(time.Second))
			mustNot(t, "ReserveDocument", stores[0].ReserveDocument(ctx, &n))
			a := dueDocument(b, fmt.Sprintf("final-%d", i), tenant.StateAccepted, now.Add(-time.Hour))
			mustNot(t, "ReserveDocument", stores[0].ReserveDocument(ctx, &a))
		}
	}
	var claims []claiming[tenant.Document]
	for _, s := range stores {
		claims = append(claims, documentClaims(s))
	}
	claimEachOnce(t, claims, due)
}

func testDocumentConcurrentClaims(t *testing.T, s DocumentStore) {
	claimConcurrently(t, []DocumentStore{s})
}

// signedXMLSize is the size of the signed XML the benchmarks store: a
// typical invoice of a few lines with its XAdES signature.
const signedXMLSize = 8 << 10

// BenchDocuments measures the pipeline's write path on a store: numbering a
// document (ReserveDocument) and then storing it signed (SaveDocument with
// an 8 KB XML, state 04), one at a time and from parallel goroutines. It
// reports documents per second. open returns a fresh, empty store.
func BenchDocuments(b *testing.B, open func(testing.TB) DocumentStore) {
	xml := bytes.Repeat([]byte("<LineaDetalle><NumeroLinea>1</NumeroLinea></LineaDetalle>"), signedXMLSize/57+1)[:signedXMLSize]
	run := func(b *testing.B, writes int, parallel, quota bool) {
		s := open(b)
		f := newDocFixture(b, s)
		ctx := context.Background()
		if quota {
			// A quota never reached: every reservation counts against it.
			limit := int64(tenant.MaxCuotaMensual)
			f.Company.CuotaMensual = &limit
			if err := s.UpdateCompany(ctx, &f.Company, false); err != nil {
				b.Fatal(err)
			}
		}
		var (
			mu sync.Mutex
			n  int
		)
		next := func() int {
			mu.Lock()
			defer mu.Unlock()
			n++
			return n
		}
		one := func() error {
			i := next()
			d := minimalDocument(f.Branch, fmt.Sprintf("bench-%d", i), "01", "00001")
			d.RequestHash = make([]byte, 32)
			if err := s.ReserveDocument(ctx, &d); err != nil {
				return err
			}
			if writes == 1 {
				return nil
			}
			d.Consecutivo = fmt.Sprintf("00100001%02s%010d", d.Tipo, d.Numero)
			d.Clave = fmt.Sprintf("506040326003101123456%020d1%08d", d.Numero, i)
			d.SignedXML = xml
			d.Place(tenant.StateSent)
			if err := s.SaveDocument(ctx, &d); err != nil || writes == 2 {
				return err
			}
			// Submitted, then settled: the two saves of a document's state
			// that follow its signing.
			d.SignedXML, d.SubmittedAt, d.Attempts = nil, time.Now(), 1
			d.NextAttemptAt = d.SubmittedAt.Add(3 * time.Second)
			if err := s.SaveDocument(ctx, &d); err != nil {
				return err
			}
			d.Place(tenant.StateAccepted)
			d.IndEstado, d.CheckedAt, d.NextAttemptAt = "aceptado", time.Now(), time.Time{}
			d.ResponseXML = xml[:3000]
			return s.SaveDocument(ctx, &d)
		}
		b.ReportAllocs()
		defer ReportCPU(b)()
		b.ResetTimer()
		start := time.Now()
		if parallel {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := one(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		} else {
			for b.Loop() {
				if err := one(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "docs/s")
	}
	b.Run("ReserveDocument", func(b *testing.B) { run(b, 1, false, false) })
	b.Run("ReserveAndSave8KB", func(b *testing.B) { run(b, 2, false, false) })
	b.Run("ReserveAndSave8KB/parallel", func(b *testing.B) { run(b, 2, true, false) })
	// A document's four writes: numbered, signed, submitted, settled.
	b.Run("Lifecycle/parallel", func(b *testing.B) { run(b, 4, true, false) })
	// The same for a company with a monthly quota, which each
	// reservation counts against (tenant.QuotaUse).
	b.Run("ReserveDocumentQuota", func(b *testing.B) { run(b, 1, false, true) })
	b.Run("ReserveAndSave8KBQuota/parallel", func(b *testing.B) { run(b, 2, true, true) })
}
