package archivesweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"facturad/tenant"
	"facturad/tenant/archive"
	"facturad/tenant/archive/archivetest"
	"facturad/tenant/printed"
)

// memStore keeps documents in memory with the ArchiveStore's rules, for
// the sweep's own logic; the stores' conformance is tenant/storetest's.
type memStore struct {
	mu       sync.Mutex
	docs     map[int64]*tenant.Document
	archived map[int64]time.Time
	dropped  map[int64]bool
	failures map[int64]int
	retryAt  map[int64]time.Time
	// broken documents cannot be read; slowUnarchived, when set, holds
	// UnarchivedRows until its context ends.
	broken         map[int64]bool
	slowUnarchived bool
	lease          string
}

func newMem(docs ...tenant.Document) *memStore {
	m := &memStore{docs: map[int64]*tenant.Document{}, archived: map[int64]time.Time{}, dropped: map[int64]bool{},
		failures: map[int64]int{}, retryAt: map[int64]time.Time{}, broken: map[int64]bool{}}
	for _, d := range docs {
		m.docs[d.ID] = &d // a copy: the test keeps its own
	}
	return m
}

func (m *memStore) row(d *tenant.Document) tenant.ArchiveRow {
	r := archive.DocumentRow(*d)
	r.ArchivedAt, r.Archive, r.Failures = m.archived[d.ID], d.Archive, m.failures[d.ID]
	return r
}

func (m *memStore) deferred(id int64, now time.Time) bool {
	at, ok := m.retryAt[id]
	return ok && at.After(now)
}

func (m *memStore) UnarchivedRows(ctx context.Context, kind tenant.ArchiveKind, after int64, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	if kind == tenant.ArchiveIssued && m.slowUnarchived {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tenant.ArchiveRow
	if kind != tenant.ArchiveIssued {
		return nil, nil
	}
	for id := after + 1; id <= int64(len(m.docs)) && len(out) < limit; id++ {
		d := m.docs[id]
		if _, ok := m.archived[id]; !ok && !m.deferred(id, now) && (d.Phase == tenant.PhaseAccepted || d.Phase == tenant.PhaseRejected) {
			out = append(out, m.row(d))
		}
	}
	return out, nil
}

func (m *memStore) MarkArchived(_ context.Context, _ tenant.ArchiveKind, id int64, loc tenant.ArchiveLocation, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.archived[id]; !ok {
		m.archived[id], m.docs[id].Archive = at, loc
		delete(m.failures, id)
		delete(m.retryAt, id)
	}
	return nil
}

func (m *memStore) DeferArchive(_ context.Context, _ tenant.ArchiveKind, id int64, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures[id]++
	m.retryAt[id] = until
	return nil
}

func (m *memStore) DroppableRows(_ context.Context, kind tenant.ArchiveKind, before, now time.Time, limit int) ([]tenant.ArchiveRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tenant.ArchiveRow
	if kind != tenant.ArchiveIssued {
		return nil, nil
	}
	for id := int64(1); id <= int64(len(m.docs)) && len(out) < limit; id++ {
		if at, ok := m.archived[id]; ok && !m.dropped[id] && !at.After(before) && !m.deferred(id, now) {
			out = append(out, m.row(m.docs[id]))
		}
	}
	return out, nil
}

func (m *memStore) DropParts(_ context.Context, _ tenant.ArchiveKind, id int64, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.archived[id]; !ok || m.dropped[id] {
		return tenant.ErrConflict
	}
	m.dropped[id] = true
	m.docs[id].SignedXML, m.docs[id].ResponseXML = nil, nil
	return nil
}

func (m *memStore) DocumentByClave(_ context.Context, clave string) (tenant.Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.docs {
		if d.Clave == clave {
			if m.broken[d.ID] {
				return tenant.Document{}, errors.New("the store cannot read this row")
			}
			return *d, nil
		}
	}
	return tenant.Document{}, tenant.ErrNotFound
}

func (m *memStore) ReceivedByClave(context.Context, int64, string) (tenant.ReceivedDocument, error) {
	return tenant.ReceivedDocument{}, tenant.ErrNotFound
}

func (m *memStore) TakeLease(_ context.Context, _, holder string, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease != "" && m.lease != holder {
		return false, nil
	}
	m.lease = holder
	return true, nil
}

func (m *memStore) ReleaseLease(_ context.Context, _, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lease == holder {
		m.lease = ""
	}
	return nil
}

// documents are two settled documents and one pending.
func documents(t *testing.T) []tenant.Document {
	signed := readSigned(t)
	mk := func(id int64, phase tenant.Phase, clave string) tenant.Document {
		d := tenant.Document{ID: id, CompanyID: 1, Ambiente: tenant.AmbientePruebas, Clave: clave,
			FechaEmision: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		d.Phase, d.Estado, d.SignedXML = phase, phase.Estado(), signed
		if phase == tenant.PhaseAccepted {
			d.ResponseXML = []byte("<MensajeHacienda/>")
		}
		return d
	}
	return []tenant.Document{mk(1, tenant.PhaseAccepted, "c1"), mk(2, tenant.PhaseSubmitted, "c2"), mk(3, tenant.PhaseRejected, "c3")}
}

func TestFailureDelaysTheDrop(t *testing.T) {
	bad, err := archive.New(archive.Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", AccessKey: "a", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t)
	// The failure below is the object store's, not the parts'.
	if _, err := archive.DocumentParts(context.Background(), docs[0], printed.Printer{}); err != nil {
		t.Fatal(err)
	}
	m := newMem(docs...)
	now := time.Now()
	s, err := New(Options{Store: m, Client: bad, After: time.Nanosecond, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	swept, res, err := s.Tick(context.Background())
	if !swept || err == nil || res.Failed == 0 || res.Archived != 0 || res.Dropped != 0 {
		t.Fatalf("Tick against a dead store = %v, %+v, %v", swept, res, err)
	}
	if len(m.archived) != 0 || len(m.dropped) != 0 || len(m.docs[1].SignedXML) == 0 {
		t.Fatalf("a failed write archived %v, dropped %v", m.archived, m.dropped)
	}
	// The rows that failed are passed over for a while.
	if m.failures[1] != 1 || !m.retryAt[1].After(now) {
		t.Fatalf("a failed row has %d failures and is retried at %v", m.failures[1], m.retryAt[1])
	}
	// Rows archived earlier whose objects cannot be read back now keep
	// their parts too: the drop checks the objects first.
	m.archived[1] = now.Add(-time.Hour)
	clear(m.retryAt)
	if _, res, _ := s.Tick(context.Background()); res.Dropped != 0 || res.Failed == 0 || m.dropped[1] || len(m.docs[1].SignedXML) == 0 {
		t.Fatalf("dropped with the archive unreadable: %+v", res)
	}
	if m.lease != "" {
		t.Errorf("the lease %q was not given back", m.lease)
	}
}

func TestSweep(t *testing.T) {
	cfg := archivetest.Config(t)
	c, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t)
	m := newMem(docs...)
	now := time.Now()
	clock := func() time.Time { return now }
	s, err := New(Options{Store: m, Client: c, After: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Another replica holds the lease: nothing is done.
	m.lease = "other"
	if swept, _, err := s.Tick(ctx); swept || err != nil {
		t.Fatalf("Tick under another's lease = %v, %v", swept, err)
	}
	m.lease = ""
	_, res, err := s.Tick(ctx)
	if err != nil || res != (Result{Archived: 2}) {
		t.Fatalf("first Tick = %+v, %v; want 2 archived (the pending one is not)", res, err)
	}
	for _, id := range []int64{1, 3} {
		d := docs[id-1]
		got, err := c.Get(ctx, archive.Key(cfg.Prefix, archive.DocumentRow(d))+"/"+archive.PartSigned)
		if err != nil || string(got) != string(d.SignedXML) {
			t.Fatalf("document %d's signed XML in the archive: %v", id, err)
		}
		if _, err := c.Get(ctx, archive.Key(cfg.Prefix, archive.DocumentRow(d))+"/"+archive.PartPDF); err != nil {
			t.Fatalf("document %d's PDF in the archive: %v", id, err)
		}
	}
	if len(m.dropped) != 0 {
		t.Fatal("dropped before archive_after")
	}
	now = now.Add(2 * time.Hour)
	if _, res, err = s.Tick(ctx); err != nil || res != (Result{Dropped: 2}) {
		t.Fatalf("Tick after archive_after = %+v, %v", res, err)
	}
	r := &archive.Reader{C: c}
	d, _ := m.DocumentByClave(ctx, "c1")
	if !d.PartsDropped() {
		t.Fatal("the parts were not dropped")
	}
	if err := r.FillDocument(ctx, &d); err != nil || string(d.SignedXML) != string(docs[0].SignedXML) || string(d.ResponseXML) != "<MensajeHacienda/>" {
		t.Fatalf("read back from the archive: %v", err)
	}
}

// TestFailingRowsDoNotStall: rows that fail every time are deferred, so
// that the next sweep gets past them to the others, and a document whose
// PDF cannot be drawn is archived without it.
func TestFailingRowsDoNotStall(t *testing.T) {
	cfg := archivetest.Config(t)
	c, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	signed := readSigned(t)
	var docs []tenant.Document
	for id := int64(1); id <= 5; id++ {
		d := tenant.Document{ID: id, CompanyID: 1, Ambiente: tenant.AmbientePruebas, Clave: fmt.Sprintf("c%d", id),
			FechaEmision: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		d.Phase, d.Estado, d.SignedXML = tenant.PhaseAccepted, tenant.StateAccepted, signed
		docs = append(docs, d)
	}
	docs[4].SignedXML = []byte("<NoEsUnComprobante/>") // no PDF can be drawn of it
	m := newMem(docs...)
	for id := int64(1); id <= maxFailRun; id++ {
		m.broken[id] = true
	}
	now := time.Now()
	s, err := New(Options{Store: m, Client: c, After: time.Hour, Tick: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, res, err := s.Tick(ctx); err == nil || res != (Result{Failed: maxFailRun}) {
		t.Fatalf("first Tick = %+v, %v; want the %d broken rows failed and the step stopped", res, err, maxFailRun)
	}
	if _, res, err := s.Tick(ctx); err != nil || res != (Result{Archived: 2, NoPDF: 1}) {
		t.Fatalf("second Tick = %+v, %v; want the two other rows archived", res, err)
	}
	key := c.Location(archive.DocumentRow(docs[4])).Key
	if got, err := c.Get(ctx, key+"/"+archive.PartSigned); err != nil || string(got) != string(docs[4].SignedXML) {
		t.Errorf("the XML of the document without a PDF: %q, %v", got, err)
	}
	if _, err := c.Get(ctx, key+"/"+archive.PartPDF); !errors.Is(err, archive.ErrNoObject) {
		t.Errorf("a PDF was archived for a document that cannot be drawn: %v", err)
	}
	// Still broken a Tick later: tried again and deferred twice as long.
	now = now.Add(time.Minute)
	if _, res, _ := s.Tick(ctx); res.Failed != maxFailRun || m.failures[1] != 2 || !m.retryAt[1].Equal(now.Add(2*time.Minute)) {
		t.Fatalf("third Tick = %+v; row 1 has %d failures, retried at %v", res, m.failures[1], m.retryAt[1])
	}
	// Mended: archived once their time comes, and their failures cleared.
	clear(m.broken)
	now = now.Add(2 * time.Minute)
	if _, res, err := s.Tick(ctx); err != nil || res.Archived != maxFailRun || m.failures[1] != 0 {
		t.Fatalf("Tick once mended = %+v, %v; failures %d", res, err, m.failures[1])
	}
}

// TestStepsShareTheSweep: a step that would take the whole sweep (the
// issued documents' archiving, held here until its time is up) leaves
// the drops their share.
func TestStepsShareTheSweep(t *testing.T) {
	cfg := archivetest.Config(t)
	c, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := newMem(documents(t)...)
	now := time.Now()
	s, err := New(Options{Store: m, Client: c, After: time.Hour, Timeout: 8 * time.Second, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, res, err := s.Tick(ctx); err != nil || res.Archived != 2 {
		t.Fatalf("first Tick = %+v, %v", res, err)
	}
	m.slowUnarchived = true
	now = now.Add(2 * time.Hour)
	start := time.Now()
	_, res, err := s.Tick(ctx)
	if err != nil || res != (Result{Dropped: 2}) {
		t.Fatalf("Tick with a step that takes its whole share = %+v, %v after %s; want the two rows dropped", res, err, time.Since(start))
	}
}

// TestDropAfterURLChange drops rows archived before the operator changed
// FACTURAD_ARCHIVE_URL's prefix: the check before the drop reads the
// objects where the row records them, writes nothing under the new
// prefix, and the dropped row reads back from where it was archived.
func TestDropAfterURLChange(t *testing.T) {
	cfg := archivetest.Config(t)
	old, err := archive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t)
	m := newMem(docs...)
	now := time.Now()
	clock := func() time.Time { return now }
	ctx := context.Background()
	s, err := New(Options{Store: m, Client: old, After: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, res, err := s.Tick(ctx); err != nil || res.Archived != 2 {
		t.Fatalf("Tick = %+v, %v", res, err)
	}

	moved := cfg
	moved.Prefix = cfg.Prefix + "-movido"
	c, err := archive.New(moved)
	if err != nil {
		t.Fatal(err)
	}
	s, err = New(Options{Store: m, Client: c, After: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if _, res, err := s.Tick(ctx); err != nil || res.Dropped != 2 {
		t.Fatalf("Tick after the prefix changed = %+v, %v", res, err)
	}
	row := archive.DocumentRow(docs[0])
	if _, err := c.Get(ctx, c.Location(row).Key+"/"+archive.PartSigned); !errors.Is(err, archive.ErrNoObject) {
		t.Errorf("the check before the drop wrote under the new prefix: %v", err)
	}
	d, _ := m.DocumentByClave(ctx, docs[0].Clave)
	if !d.PartsDropped() || d.Archive != old.Location(row) {
		t.Fatalf("dropped %v, recorded at %+v", d.PartsDropped(), d.Archive)
	}
	r := &archive.Reader{C: c}
	if err := r.FillDocument(ctx, &d); err != nil || string(d.SignedXML) != string(docs[0].SignedXML) {
		t.Fatalf("read back after the prefix changed: %v", err)
	}
}

// readSigned is a signed v4.4 invoice of the signer's golden files, which
// the printed representation can draw.
func readSigned(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../signer/testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
