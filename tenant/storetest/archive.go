package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
)

// ArchiveStore is what the archive suite needs: the documents and
// received documents whose rows are archived, their listings, and the
// tenant.ArchiveStore under test. Both adapters are all of it.
type ArchiveStore interface {
	ReceivedStore
	tenant.DocumentLister
	tenant.ArchiveStore
}

// RunArchive checks every behaviour of the tenant.ArchiveStore contract as
// subtests. open must return a fresh, empty, migrated store for each call
// and arrange its cleanup with t.Cleanup.
func RunArchive(t *testing.T, open func(t *testing.T) ArchiveStore) {
	contract[ArchiveStore]{
		{"ok/unarchived rows are the settled ones, by id", testArchiveUnarchived},
		{"error/unknown kind", testArchiveKind},
		{"ok/mark archived once; the first record is kept", testArchiveMark},
		{"error/mark a row that is not settled or missing", testArchiveMarkRefused},
		{"ok/droppable rows are the archived kept ones, oldest first", testArchiveDroppable},
		{"ok/drop empties an archived document's parts and keeps its metadata", testArchiveDropDocument},
		{"ok/drop empties an archived received document's parts and keeps its metadata", testArchiveDropReceived},
		{"error/drop only an archived settled row, once", testArchiveDropRefused},
		{"ok/listings are the same before and after", testArchiveListings},
		{"ok/a deferred row is passed over until its time; archiving clears its failures", testArchiveDefer},
	}.run(t, open)
}

// RunArchiveReplicas checks that two stores on one database, as two
// replicas of the service hold them, mark and drop each row once when
// both work on the same rows at once. open returns both, fresh and
// migrated, and arranges their cleanup.
func RunArchiveReplicas(t *testing.T, open func(t *testing.T) (ArchiveStore, ArchiveStore)) {
	t.Run("ok/replicas marking and dropping the same rows at once", func(t *testing.T) {
		a, b := open(t)
		archiveConcurrently(t, []ArchiveStore{a, b})
	})
	t.Run("ok/concurrent marks and drops on one store", func(t *testing.T) {
		a, _ := open(t)
		archiveConcurrently(t, []ArchiveStore{a})
	})
}

// archiveNow is the sweep's clock in the suite: after every fixture's
// archiving, before any deferral's end.
var archiveNow = archiveBase.Add(24 * time.Hour)

// archiveLoc is where the fixtures say a row is archived.
func archiveLoc(key string) tenant.ArchiveLocation {
	return tenant.ArchiveLocation{Bucket: "archivo", Key: key}
}

// archiveBase is the instant the archive fixtures are archived around,
// with microseconds, which both stores keep.
var archiveBase = time.Date(2026, 6, 1, 12, 0, 0, 123456000, time.UTC)

// settledDocument reserves a document in branch b and takes it through
// the saves of its lifecycle to estado st (sent, then st), with a signed
// XML and, once settled, an answer; n makes its clave.
func settledDocument(t *testing.T, s ArchiveStore, b tenant.Branch, name string, n int, st tenant.State) tenant.Document {
	t.Helper()
	ctx := context.Background()
	d := minimalDocument(b, name, "01", "00001")
	d.FechaEmision = time.Date(2026, 5, 30, 23, 30, 0, 0, hacienda.CostaRica).Add(time.Duration(n) * time.Minute)
	mustNot(t, "ReserveDocument", s.ReserveDocument(ctx, &d))
	if st == tenant.StatePending {
		return d
	}
	d.Consecutivo = fmt.Sprintf("00100001%02s%010d", d.Tipo, d.Numero)
	d.Clave = fmt.Sprintf("506300526%012d%020d1%08d", b.CompanyID, d.Numero, n)
	d.SignedXML = binaryPayload(8<<10+n, byte(n))
	d.EmisorTipo, d.EmisorNumero = "02", "3101123456"
	d.Place(tenant.StateSent)
	mustNot(t, "SaveDocument sent", s.SaveDocument(ctx, &d))
	if st == tenant.StateSent {
		return d
	}
	d.Place(st)
	d.IndEstado, d.CheckedAt = map[tenant.State]string{tenant.StateAccepted: "aceptado", tenant.StateRejected: "rechazado"}[st], archiveBase
	d.ResponseXML = binaryPayload(2<<10+n, byte(n+1))
	mustNot(t, "SaveDocument settled", s.SaveDocument(ctx, &d))
	got, err := s.DocumentByClave(ctx, d.Clave)
	mustNot(t, "DocumentByClave", err)
	return got
}

// settledReceived reserves a received document in branch b whose message
// is in estado st, signed and answered when settled; n makes its clave.
func settledReceived(t *testing.T, s ArchiveStore, b tenant.Branch, name string, n int, st tenant.State) tenant.ReceivedDocument {
	t.Helper()
	ctx := context.Background()
	r := receivedDocument(b, name, fmt.Sprintf("506300526003101123456001000010100%08d112345678", n), "05")
	r.SupplierXML = binaryPayload(6<<10+n, byte(n+2))
	mustNot(t, "ReserveReceived", s.ReserveReceived(ctx, &r))
	if st == tenant.StatePending {
		return r
	}
	r.Consecutivo = fmt.Sprintf("00100001%02s%010d", r.Tipo, r.Numero)
	r.SignedXML = binaryPayload(3<<10+n, byte(n+3))
	r.Place(tenant.StateSent)
	mustNot(t, "SaveReceived sent", s.SaveReceived(ctx, &r))
	if st == tenant.StateSent {
		return r
	}
	r.Place(st)
	r.ResponseXML = binaryPayload(1<<10+n, byte(n+4))
	mustNot(t, "SaveReceived settled", s.SaveReceived(ctx, &r))
	got, err := s.ReceivedByClave(ctx, r.CompanyID, r.Clave)
	mustNot(t, "ReceivedByClave", err)
	return got
}

// archiveRowOf is the row the archive listings return for d.
func archiveRowOf(d tenant.Document) tenant.ArchiveRow {
	return tenant.ArchiveRow{Kind: tenant.ArchiveIssued, ID: d.ID, CompanyID: d.CompanyID, Ambiente: d.Ambiente,
		Clave: d.Clave, FechaEmision: d.FechaEmision, CreatedAt: d.CreatedAt}
}

func receivedRowOf(r tenant.ReceivedDocument) tenant.ArchiveRow {
	return tenant.ArchiveRow{Kind: tenant.ArchiveReceived, ID: r.ID, CompanyID: r.CompanyID, Ambiente: r.Ambiente,
		Clave: r.Clave, FechaEmision: r.FechaEmision, CreatedAt: r.CreatedAt}
}

// sameRows compares archive rows field by field, times with Equal and in
// UTC.
func sameRows(t *testing.T, what string, want, got []tenant.ArchiveRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d rows %v, want %d %v", what, len(got), rowIDs(got), len(want), rowIDs(want))
		return
	}
	for i := range want {
		same(t, fmt.Sprintf("%s: row %d", what, i), want[i], got[i])
		for name, ts := range map[string]time.Time{"FechaEmision": got[i].FechaEmision, "CreatedAt": got[i].CreatedAt, "ArchivedAt": got[i].ArchivedAt} {
			if !ts.IsZero() && !isUTC(ts) {
				t.Errorf("%s: row %d: %s %v is not UTC", what, i, name, ts)
			}
		}
	}
}

func rowIDs(rows []tenant.ArchiveRow) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

func testArchiveUnarchived(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	g := newDocFixture(t, s) // another company's rows are listed too: the sweep serves every company
	var want []tenant.ArchiveRow
	for i, st := range []tenant.State{tenant.StatePending, tenant.StateAccepted, tenant.StateSent, tenant.StateRejected, tenant.StateAccepted} {
		b := []tenant.Branch{f.Branch, g.Branch2}[i%2]
		d := settledDocument(t, s, b, fmt.Sprintf("doc-%d", i), i+1, st)
		if st == tenant.StateAccepted || st == tenant.StateRejected {
			want = append(want, archiveRowOf(d))
		}
	}
	var wantRec []tenant.ArchiveRow
	for i, st := range []tenant.State{tenant.StateRejected, tenant.StateSent, tenant.StatePending, tenant.StateAccepted} {
		r := settledReceived(t, s, f.Branch2, fmt.Sprintf("rec-%d", i), i+1, st)
		if st == tenant.StateAccepted || st == tenant.StateRejected {
			wantRec = append(wantRec, receivedRowOf(r))
		}
	}

	got, err := s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "issued", want, got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveReceived, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "received", wantRec, got)

	// Pages by id.
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, archiveNow, 2)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "first page", want[:2], got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveIssued, got[1].ID, archiveNow, 2)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "second page", want[2:], got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveIssued, want[len(want)-1].ID, archiveNow, 2)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "after the last", nil, got)
}

func testArchiveKind(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	const bad = tenant.ArchiveKind("documents")
	if _, err := s.UnarchivedRows(ctx, bad, 0, archiveNow, 10); err == nil {
		t.Error("UnarchivedRows of an unknown kind: no error")
	}
	if _, err := s.DroppableRows(ctx, bad, archiveBase, archiveNow, 10); err == nil {
		t.Error("DroppableRows of an unknown kind: no error")
	}
	if err := s.MarkArchived(ctx, bad, 1, archiveLoc("k"), archiveBase); err == nil {
		t.Error("MarkArchived of an unknown kind: no error")
	}
	if err := s.DropParts(ctx, bad, 1, archiveBase); err == nil {
		t.Error("DropParts of an unknown kind: no error")
	}
}

func testArchiveMark(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d1 := settledDocument(t, s, f.Branch, "uno", 1, tenant.StateAccepted)
	d2 := settledDocument(t, s, f.Branch, "dos", 2, tenant.StateRejected)
	r1 := settledReceived(t, s, f.Branch, "rec", 1, tenant.StateAccepted)

	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d1.ID, archiveLoc("p/1/pruebas/emitidos/x"), archiveBase))
	mustNot(t, "MarkArchived received", s.MarkArchived(ctx, tenant.ArchiveReceived, r1.ID, archiveLoc("p/1/pruebas/recibidos/x"), archiveBase))
	// Marked again (a second replica, a retry): no error, and the first
	// record stays.
	mustNot(t, "MarkArchived again", s.MarkArchived(ctx, tenant.ArchiveIssued, d1.ID, archiveLoc("otra"), archiveBase.Add(time.Hour)))

	got, err := s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "unarchived after the mark", []tenant.ArchiveRow{archiveRowOf(d2)}, got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveReceived, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "unarchived received after the mark", nil, got)

	want := archiveRowOf(d1)
	want.ArchivedAt, want.Archive = archiveBase, archiveLoc("p/1/pruebas/emitidos/x")
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase.Add(2*time.Hour), archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "archived", []tenant.ArchiveRow{want}, got)

	// The mark changes nothing a reader sees but where the row is
	// archived, which the whole-row reads return (the first record) and
	// the state read does not.
	after, err := s.DocumentByClave(ctx, d1.Clave)
	mustNot(t, "DocumentByClave", err)
	d1.Archive = archiveLoc("p/1/pruebas/emitidos/x")
	same(t, "the marked document", d1, after)
	after, err = s.DocumentByExternalID(ctx, d1.BranchID, d1.IDExterno)
	mustNot(t, "DocumentByExternalID", err)
	same(t, "the marked document by id_externo", d1, after)
	state, err := s.DocumentStateByClave(ctx, d1.Clave)
	mustNot(t, "DocumentStateByClave", err)
	if state.Archive != (tenant.ArchiveLocation{}) {
		t.Errorf("the state read returns the archive location %+v", state.Archive)
	}
	rafter, err := s.ReceivedByClave(ctx, r1.CompanyID, r1.Clave)
	mustNot(t, "ReceivedByClave", err)
	r1.Archive = archiveLoc("p/1/pruebas/recibidos/x")
	same(t, "the marked received document", r1, rafter)
	rafter, err = s.ReceivedByExternalID(ctx, r1.BranchID, r1.IDExterno)
	mustNot(t, "ReceivedByExternalID", err)
	same(t, "the marked received document by id_externo", r1, rafter)
}

func testArchiveMarkRefused(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	for i, st := range []tenant.State{tenant.StatePending, tenant.StateSent} {
		d := settledDocument(t, s, f.Branch, "doc-"+string(st), i+1, st)
		wantErr(t, "MarkArchived of a document in "+string(st), s.MarkArchived(ctx, tenant.ArchiveIssued, d.ID, archiveLoc("k"), archiveBase), tenant.ErrConflict)
		r := settledReceived(t, s, f.Branch, "rec-"+string(st), i+1, st)
		wantErr(t, "MarkArchived of a received document in "+string(st), s.MarkArchived(ctx, tenant.ArchiveReceived, r.ID, archiveLoc("k"), archiveBase), tenant.ErrConflict)
	}
	wantErr(t, "MarkArchived of a missing document", s.MarkArchived(ctx, tenant.ArchiveIssued, 1<<40, archiveLoc("k"), archiveBase), tenant.ErrNotFound)
	wantErr(t, "MarkArchived of a missing received document", s.MarkArchived(ctx, tenant.ArchiveReceived, 1<<40, archiveLoc("k"), archiveBase), tenant.ErrNotFound)
	got, err := s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase.Add(time.Hour), archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "archived after refused marks", nil, got)
}

func testArchiveDroppable(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	// Marked out of id order: the listing goes by when they were archived.
	at := []time.Duration{3 * time.Minute, time.Minute, 2 * time.Minute, 10 * time.Minute}
	rows := make([]tenant.ArchiveRow, len(at))
	for i, off := range at {
		d := settledDocument(t, s, f.Branch, fmt.Sprintf("doc-%d", i), i+1, tenant.StateAccepted)
		mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d.ID, archiveLoc(fmt.Sprintf("k/%d", i)), archiveBase.Add(off)))
		rows[i] = archiveRowOf(d)
		rows[i].ArchivedAt, rows[i].Archive = archiveBase.Add(off), archiveLoc(fmt.Sprintf("k/%d", i))
	}
	waiting := settledDocument(t, s, f.Branch, "not-archived", 9, tenant.StateAccepted)
	r := settledReceived(t, s, f.Branch, "rec", 1, tenant.StateRejected)
	mustNot(t, "MarkArchived received", s.MarkArchived(ctx, tenant.ArchiveReceived, r.ID, archiveLoc("k/r"), archiveBase))

	// At or before the bound, oldest first.
	got, err := s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase.Add(3*time.Minute), archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable", []tenant.ArchiveRow{rows[1], rows[2], rows[0]}, got)
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase.Add(3*time.Minute), archiveNow, 2)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable, limited", []tenant.ArchiveRow{rows[1], rows[2]}, got)
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase, archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable before any", nil, got)

	// A dropped row is no longer listed.
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveIssued, rows[2].ID, archiveBase.Add(time.Hour)))
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase.Add(time.Hour), archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable after a drop", []tenant.ArchiveRow{rows[1], rows[0], rows[3]}, got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "unarchived after a drop", []tenant.ArchiveRow{archiveRowOf(waiting)}, got)

	rr := receivedRowOf(r)
	rr.ArchivedAt, rr.Archive = archiveBase, archiveLoc("k/r")
	got, err = s.DroppableRows(ctx, tenant.ArchiveReceived, archiveBase, archiveNow, 10)
	mustNot(t, "DroppableRows received", err)
	sameRows(t, "droppable received", []tenant.ArchiveRow{rr}, got)
}

// withoutParts is d as a read of it after the drop must return: every
// field as it was, the parts empty.
func withoutParts(d tenant.Document) tenant.Document {
	d.SignedXML, d.ResponseXML = nil, nil
	return d
}

func testArchiveDropDocument(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d := settledDocument(t, s, f.Branch, "uno", 1, tenant.StateAccepted)
	kept := settledDocument(t, s, f.Branch, "dos", 2, tenant.StateAccepted)
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d.ID, archiveLoc("k/1"), archiveBase))
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, kept.ID, archiveLoc("k/2"), archiveBase))
	d.Archive, kept.Archive = archiveLoc("k/1"), archiveLoc("k/2")
	if d.PartsDropped() {
		t.Fatal("a settled document with its parts reads as dropped")
	}
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveIssued, d.ID, archiveBase.Add(time.Minute)))

	want := withoutParts(d)
	readBoth(t, s, "the dropped document", want)
	got, err := s.DocumentByClave(ctx, d.Clave)
	mustNot(t, "DocumentByClave", err)
	if !got.PartsDropped() {
		t.Error("the dropped document does not read as dropped")
	}
	state, err := s.DocumentStateByClave(ctx, d.Clave)
	mustNot(t, "DocumentStateByClave", err)
	want.Request, want.Archive = nil, tenant.ArchiveLocation{}
	same(t, "the dropped document's state read", want, state)

	// The other archived document keeps its parts.
	readBoth(t, s, "the archived document not dropped", kept)
}

func testArchiveDropReceived(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	r := settledReceived(t, s, f.Branch, "rec", 1, tenant.StateAccepted)
	kept := settledReceived(t, s, f.Branch, "kept", 2, tenant.StateRejected)
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveReceived, r.ID, archiveLoc("k/r"), archiveBase))
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveReceived, kept.ID, archiveLoc("k/k"), archiveBase))
	r.Archive, kept.Archive = archiveLoc("k/r"), archiveLoc("k/k")
	if r.PartsDropped() {
		t.Fatal("a settled received document with its parts reads as dropped")
	}
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveReceived, r.ID, archiveBase.Add(time.Minute)))

	want := r
	want.SupplierXML, want.SignedXML, want.ResponseXML = nil, nil, nil
	for what, read := range map[string]func() (tenant.ReceivedDocument, error){
		"by clave":      func() (tenant.ReceivedDocument, error) { return s.ReceivedByClave(ctx, r.CompanyID, r.Clave) },
		"by id_externo": func() (tenant.ReceivedDocument, error) { return s.ReceivedByExternalID(ctx, r.BranchID, r.IDExterno) },
	} {
		got, err := read()
		mustNot(t, what, err)
		same(t, "the dropped received document "+what, want, got)
		if !got.PartsDropped() {
			t.Errorf("%s: the dropped received document does not read as dropped", what)
		}
	}
	got, err := s.ReceivedByClave(ctx, kept.CompanyID, kept.Clave)
	mustNot(t, "ReceivedByClave", err)
	same(t, "the archived received document not dropped", kept, got)
}

func testArchiveDropRefused(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	// Settled but not archived, and not settled: refused, parts kept.
	for i, st := range []tenant.State{tenant.StateAccepted, tenant.StateSent} {
		d := settledDocument(t, s, f.Branch, "doc-"+string(st), i+1, st)
		wantErr(t, "DropParts of a document not archived in "+string(st), s.DropParts(ctx, tenant.ArchiveIssued, d.ID, archiveBase), tenant.ErrConflict)
		readBoth(t, s, "a document whose drop was refused", d)
		r := settledReceived(t, s, f.Branch, "rec-"+string(st), i+1, st)
		wantErr(t, "DropParts of a received document not archived in "+string(st), s.DropParts(ctx, tenant.ArchiveReceived, r.ID, archiveBase), tenant.ErrConflict)
		got, err := s.ReceivedByClave(ctx, r.CompanyID, r.Clave)
		mustNot(t, "ReceivedByClave", err)
		same(t, "a received document whose drop was refused", r, got)
	}
	wantErr(t, "DropParts of a missing document", s.DropParts(ctx, tenant.ArchiveIssued, 1<<40, archiveBase), tenant.ErrNotFound)
	wantErr(t, "DropParts of a missing received document", s.DropParts(ctx, tenant.ArchiveReceived, 1<<40, archiveBase), tenant.ErrNotFound)

	// Dropped once; the second drop is refused and changes nothing.
	d := settledDocument(t, s, f.Branch, "twice", 7, tenant.StateRejected)
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d.ID, archiveLoc("k"), archiveBase))
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveIssued, d.ID, archiveBase.Add(time.Minute)))
	wantErr(t, "DropParts twice", s.DropParts(ctx, tenant.ArchiveIssued, d.ID, archiveBase.Add(2*time.Minute)), tenant.ErrConflict)
	d.Archive = archiveLoc("k")
	readBoth(t, s, "a document dropped twice", withoutParts(d))
	r := settledReceived(t, s, f.Branch, "twice", 8, tenant.StateAccepted)
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveReceived, r.ID, archiveLoc("k"), archiveBase))
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveReceived, r.ID, archiveBase.Add(time.Minute)))
	wantErr(t, "DropParts of a received document twice", s.DropParts(ctx, tenant.ArchiveReceived, r.ID, archiveBase.Add(2*time.Minute)), tenant.ErrConflict)
}

func testArchiveListings(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	var docs []tenant.Document
	for i, st := range []tenant.State{tenant.StateAccepted, tenant.StateRejected, tenant.StateSent, tenant.StateAccepted} {
		docs = append(docs, settledDocument(t, s, f.Branch, fmt.Sprintf("doc-%d", i), i+1, st))
	}
	var recs []tenant.ReceivedDocument
	for i, st := range []tenant.State{tenant.StateAccepted, tenant.StateRejected} {
		recs = append(recs, settledReceived(t, s, f.Branch, fmt.Sprintf("rec-%d", i), i+1, st))
	}
	q := tenant.ListQuery{CompanyID: f.Company.ID, Limit: 20}
	before, err := s.ListDocuments(ctx, q)
	mustNot(t, "ListDocuments", err)
	beforeRec, err := s.ListReceived(ctx, q)
	mustNot(t, "ListReceived", err)
	if len(before) != len(docs) || len(beforeRec) != len(recs) {
		t.Fatalf("listed %d documents and %d received, want %d and %d", len(before), len(beforeRec), len(docs), len(recs))
	}

	for _, i := range []int{0, 1, 3} {
		mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, docs[i].ID, archiveLoc("k"), archiveBase))
	}
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveIssued, docs[0].ID, archiveBase))
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveIssued, docs[1].ID, archiveBase))
	for _, r := range recs {
		mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveReceived, r.ID, archiveLoc("k"), archiveBase))
	}
	mustNot(t, "DropParts", s.DropParts(ctx, tenant.ArchiveReceived, recs[0].ID, archiveBase))

	after, err := s.ListDocuments(ctx, q)
	mustNot(t, "ListDocuments", err)
	afterRec, err := s.ListReceived(ctx, q)
	mustNot(t, "ListReceived", err)
	if len(after) != len(before) || len(afterRec) != len(beforeRec) {
		t.Fatalf("after the drops: listed %d documents and %d received, want %d and %d", len(after), len(afterRec), len(before), len(beforeRec))
	}
	for i := range before {
		same(t, fmt.Sprintf("listed document %d", i), before[i], after[i])
	}
	for i := range beforeRec {
		same(t, fmt.Sprintf("listed received document %d", i), beforeRec[i], afterRec[i])
	}
	// Filtered by estado too.
	q.Estado = tenant.StateAccepted
	acc, err := s.ListDocuments(ctx, q)
	mustNot(t, "ListDocuments", err)
	if len(acc) != 2 {
		t.Errorf("listed %d accepted documents after the drops, want 2", len(acc))
	}
}

// archiveConcurrently settles documents and received documents through
// stores[0], then has two workers per store mark every row (each with a
// key and time of its own) and drop every row at once, as two sweeps
// whose lease overlapped would: every row ends marked once with one of
// the records, dropped once (exactly one DropParts answers nil), and
// its metadata intact.
func archiveConcurrently(t *testing.T, stores []ArchiveStore) {
	t.Helper()
	ctx := context.Background()
	f := newDocFixture(t, stores[0])
	const n = 24
	docs := map[int64]tenant.Document{}
	recs := map[int64]tenant.ReceivedDocument{}
	for i := range n {
		st := []tenant.State{tenant.StateAccepted, tenant.StateRejected}[i%2]
		d := settledDocument(t, stores[0], []tenant.Branch{f.Branch, f.Branch2}[i%2], fmt.Sprintf("doc-%d", i), i+1, st)
		docs[d.ID] = d
		if i%3 == 0 {
			r := settledReceived(t, stores[0], f.Branch, fmt.Sprintf("rec-%d", i), i+1, st)
			recs[r.ID] = r
		}
	}
	type worker struct {
		s  ArchiveStore
		at time.Time
	}
	var workers []worker
	for i, s := range stores {
		for w := range 2 {
			workers = append(workers, worker{s, archiveBase.Add(time.Duration(2*i+w) * time.Second)})
		}
	}
	kinds := []tenant.ArchiveKind{tenant.ArchiveIssued, tenant.ArchiveReceived}
	var (
		mu      sync.Mutex
		drops   = map[tenant.ArchiveKind]map[int64]int{tenant.ArchiveIssued: {}, tenant.ArchiveReceived: {}}
		errs    []error
		wg      sync.WaitGroup
		start   = make(chan struct{})
		markAts = map[time.Time]bool{}
	)
	for _, w := range workers {
		markAts[w.at] = true
		wg.Go(func() {
			<-start
			fail := func(err error) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			for _, kind := range kinds {
				rows, err := w.s.UnarchivedRows(ctx, kind, 0, archiveNow, 2*n)
				if err != nil {
					fail(err)
					return
				}
				for _, r := range rows {
					if err := w.s.MarkArchived(ctx, kind, r.ID, archiveLoc(fmt.Sprintf("k/%d", r.ID)), w.at); err != nil {
						fail(fmt.Errorf("MarkArchived %s %d: %w", kind, r.ID, err))
					}
				}
			}
			for _, kind := range kinds {
				rows, err := w.s.DroppableRows(ctx, kind, archiveBase.Add(time.Hour), archiveNow, 2*n)
				if err != nil {
					fail(err)
					return
				}
				for _, r := range rows {
					switch err := w.s.DropParts(ctx, kind, r.ID, w.at.Add(time.Minute)); {
					case err == nil:
						mu.Lock()
						drops[kind][r.ID]++
						mu.Unlock()
					case errors.Is(err, tenant.ErrConflict):
					default:
						fail(fmt.Errorf("DropParts %s %d: %w", kind, r.ID, err))
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}

	// Whatever a worker left (its listing ran before another's marks),
	// the rest is dropped now; a row is dropped by one call only.
	s := stores[len(stores)-1]
	for _, kind := range kinds {
		rows, err := s.UnarchivedRows(ctx, kind, 0, archiveNow, 2*n)
		mustNot(t, "UnarchivedRows", err)
		if len(rows) != 0 {
			t.Errorf("%s: %d rows left unarchived after every worker marked them: %v", kind, len(rows), rowIDs(rows))
		}
		rows, err = s.DroppableRows(ctx, kind, archiveBase.Add(time.Hour), archiveNow, 2*n)
		mustNot(t, "DroppableRows", err)
		for _, r := range rows {
			if !markAts[r.ArchivedAt] {
				t.Errorf("%s %d archived at %v, no worker's time", kind, r.ID, r.ArchivedAt)
			}
			mustNot(t, "DropParts", s.DropParts(ctx, kind, r.ID, archiveBase.Add(2*time.Hour)))
			drops[kind][r.ID]++
		}
	}
	for id, d := range docs {
		if drops[tenant.ArchiveIssued][id] != 1 {
			t.Errorf("document %d dropped by %d calls, want 1", id, drops[tenant.ArchiveIssued][id])
		}
		got, err := s.DocumentByClave(ctx, d.Clave)
		mustNot(t, "DocumentByClave", err)
		d.Archive = archiveLoc(fmt.Sprintf("k/%d", id))
		same(t, "document "+d.IDExterno, withoutParts(d), got)
	}
	for id, r := range recs {
		if drops[tenant.ArchiveReceived][id] != 1 {
			t.Errorf("received document %d dropped by %d calls, want 1", id, drops[tenant.ArchiveReceived][id])
		}
		got, err := s.ReceivedByClave(ctx, r.CompanyID, r.Clave)
		mustNot(t, "ReceivedByClave", err)
		want := r
		want.SupplierXML, want.SignedXML, want.ResponseXML = nil, nil, nil
		want.Archive = archiveLoc(fmt.Sprintf("k/%d", id))
		same(t, "received document "+r.IDExterno, want, got)
	}
	if extra := slices.Collect(func(yield func(int64) bool) {
		for id := range drops[tenant.ArchiveIssued] {
			if _, ok := docs[id]; !ok && !yield(id) {
				return
			}
		}
	}); len(extra) > 0 {
		t.Errorf("dropped rows that are no fixture's: %v", extra)
	}
}

func testArchiveDefer(t *testing.T, s ArchiveStore) {
	ctx := context.Background()
	f := newDocFixture(t, s)
	d1 := settledDocument(t, s, f.Branch, "uno", 1, tenant.StateAccepted)
	d2 := settledDocument(t, s, f.Branch, "dos", 2, tenant.StateAccepted)
	r := settledReceived(t, s, f.Branch, "rec", 1, tenant.StateAccepted)
	until := archiveNow.Add(time.Hour)
	mustNot(t, "DeferArchive", s.DeferArchive(ctx, tenant.ArchiveIssued, d1.ID, until))
	mustNot(t, "DeferArchive again", s.DeferArchive(ctx, tenant.ArchiveIssued, d1.ID, until))
	mustNot(t, "DeferArchive received", s.DeferArchive(ctx, tenant.ArchiveReceived, r.ID, until))
	wantErr(t, "DeferArchive of a missing row", s.DeferArchive(ctx, tenant.ArchiveIssued, 1<<40, until), tenant.ErrNotFound)

	got, err := s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows", err)
	sameRows(t, "unarchived while one is deferred", []tenant.ArchiveRow{archiveRowOf(d2)}, got)
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveReceived, 0, archiveNow, 10)
	mustNot(t, "UnarchivedRows received", err)
	sameRows(t, "unarchived received while deferred", nil, got)
	// At its time it is back, with its failures counted.
	got, err = s.UnarchivedRows(ctx, tenant.ArchiveIssued, 0, until, 10)
	mustNot(t, "UnarchivedRows", err)
	w1 := archiveRowOf(d1)
	w1.Failures = 2
	sameRows(t, "unarchived once the deferral ends", []tenant.ArchiveRow{w1, archiveRowOf(d2)}, got)

	// Archiving clears the failures; a deferred drop is passed over too.
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d1.ID, archiveLoc("k/1"), archiveBase))
	mustNot(t, "MarkArchived", s.MarkArchived(ctx, tenant.ArchiveIssued, d2.ID, archiveLoc("k/2"), archiveBase))
	mustNot(t, "DeferArchive", s.DeferArchive(ctx, tenant.ArchiveIssued, d2.ID, until))
	w1.Failures, w1.ArchivedAt, w1.Archive = 0, archiveBase, archiveLoc("k/1")
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase, archiveNow, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable while one is deferred", []tenant.ArchiveRow{w1}, got)
	w2 := archiveRowOf(d2)
	w2.Failures, w2.ArchivedAt, w2.Archive = 1, archiveBase, archiveLoc("k/2")
	got, err = s.DroppableRows(ctx, tenant.ArchiveIssued, archiveBase, until, 10)
	mustNot(t, "DroppableRows", err)
	sameRows(t, "droppable once the deferral ends", []tenant.ArchiveRow{w1, w2}, got)

	// A deferral changes nothing a reader sees.
	after, err := s.DocumentByClave(ctx, d2.Clave)
	mustNot(t, "DocumentByClave", err)
	d2.Archive = archiveLoc("k/2")
	same(t, "the deferred document", d2, after)
}
