package archivesweep

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/tenant"
	"facturad/tenant/archive"
	"facturad/tenant/archive/archivetest"
)

// ivaMem is a memStore that also keeps IVA breakdowns (Breakdowns).
type ivaMem struct {
	*memStore
	bmu       sync.Mutex
	breakdown map[int64]string
	saves     int
	hasErr    error
}

func (m *ivaMem) HasIVABreakdown(_ context.Context, received bool, id int64) (bool, error) {
	m.bmu.Lock()
	defer m.bmu.Unlock()
	if m.hasErr != nil {
		return false, m.hasErr
	}
	_, ok := m.breakdown[id]
	return ok && !received, nil
}

func (m *ivaMem) SaveIVABreakdown(_ context.Context, received bool, id int64, b []byte) error {
	m.bmu.Lock()
	defer m.bmu.Unlock()
	if received {
		return tenant.ErrNotFound
	}
	m.breakdown[id] = string(b)
	m.saves++
	return nil
}

// TestDropKeepsTheBreakdown: a row without an IVA breakdown gets the one
// the summary would compute from its XML before that XML is dropped; one
// with a breakdown keeps its own; a store that cannot say keeps the XML.
func TestDropKeepsTheBreakdown(t *testing.T) {
	c, err := archive.New(archivetest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	docs := documents(t)
	m := &ivaMem{memStore: newMem(docs...), breakdown: map[int64]string{3: "kept at issuance"}}
	now := time.Now()
	s, err := New(Options{Store: m, Client: c, After: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, res, err := s.Tick(ctx); err != nil || res != (Result{Archived: 2}) {
		t.Fatalf("archiving Tick = %+v, %v", res, err)
	}
	if m.saves != 0 {
		t.Fatalf("breakdowns written while archiving: %v", m.breakdown)
	}

	// The object store answers, the store cannot tell: nothing dropped.
	now = now.Add(2 * time.Hour)
	m.hasErr = errors.New("store down")
	if _, res, err := s.Tick(ctx); err == nil || res.Dropped != 0 || len(m.dropped) != 0 {
		t.Fatalf("Tick with the breakdowns unreadable = %+v, %v; want nothing dropped", res, err)
	}
	m.hasErr = nil

	// The failed rows wait out their back-off (a sweep's interval after
	// one failure) before they are tried again.
	now = now.Add(2 * s.o.Tick)
	if _, res, err := s.Tick(ctx); err != nil || res != (Result{Dropped: 2}) {
		t.Fatalf("dropping Tick = %+v, %v", res, err)
	}
	doc, err := hacienda.ParseXML(docs[0].SignedXML)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(tenant.BreakdownOf(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.breakdown[1]; got != string(want) {
		t.Errorf("document 1's breakdown = %q, want %q (computed from its XML)", got, want)
	}
	var b tenant.IVABreakdown
	if err := json.Unmarshal(want, &b); err != nil || len(b.Cells) == 0 {
		t.Errorf("the computed breakdown %s: %v, %d cells", want, err, len(b.Cells))
	}
	if got := m.breakdown[3]; got != "kept at issuance" {
		t.Errorf("document 3's breakdown was replaced: %q", got)
	}
	if m.saves != 1 {
		t.Errorf("%d breakdowns written, want 1", m.saves)
	}
	if !m.dropped[1] || !m.dropped[3] {
		t.Errorf("dropped %v", m.dropped)
	}
}
