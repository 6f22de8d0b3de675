package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/tenant"
)

// The registry's cache is a consumer-side interface; a store is one through
// tenant.RegistryCache.
var _ registry.Cache = tenant.RegistryCache{}

// Clock is a settable clock for a store under test (its Options.Now): the
// sandbox's, which moves only when told to.
type Clock = sandbox.ManualClock

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return sandbox.NewManualClock(t) }

// RunRegistry checks every behaviour of tenant.RegistryStore as subtests,
// on the store itself and through tenant.RegistryCache. open must return a
// fresh, empty, migrated store for each call whose clock is now.
func RunRegistry(t *testing.T, open func(t *testing.T, now func() time.Time) tenant.RegistryStore) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, s tenant.RegistryStore, c *Clock)
	}{
		{"ok/put then get keeps the bytes", testRegistryRoundTrip},
		{"ok/a missing key is absent, not an error", testRegistryMissing},
		{"ok/a put replaces the value and its keep", testRegistryOverwrite},
		{"ok/a value is forgotten keep after its put", testRegistryExpiry},
		{"ok/keep 0 is never forgotten", testRegistryNeverForget},
		{"error/a negative keep", testRegistryNegativeKeep},
		{"ok/many keys, concurrently", testRegistryManyKeys},
		{"ok/purge deletes forgotten rows only, oldest first, in batches", testRegistryPurge},
		{"ok/puts purge forgotten rows every RegistryPurgeEvery puts", testRegistryPutPurges},
		{"ok/the adapter is the store's cache", testRegistryAdapter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock(registryBase)
			tt.fn(t, open(t, c.Now), c)
		})
	}
}

var registryBase = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// allBytes is every byte value, NUL and invalid UTF-8 included.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func mustGet(t *testing.T, s tenant.RegistryStore, key string) ([]byte, bool) {
	t.Helper()
	v, ok, err := s.RegistryGet(context.Background(), key)
	if err != nil {
		t.Fatalf("RegistryGet(%q): %v", key, err)
	}
	if !ok && v != nil {
		t.Errorf("RegistryGet(%q) is absent but returned %q", key, v)
	}
	return v, ok
}

func mustPut(t *testing.T, s tenant.RegistryStore, key string, value []byte, keep time.Duration) {
	t.Helper()
	if err := s.RegistryPut(context.Background(), key, value, keep); err != nil {
		t.Fatalf("RegistryPut(%q, keep %s): %v", key, keep, err)
	}
}

func wantValue(t *testing.T, s tenant.RegistryStore, key string, want []byte) {
	t.Helper()
	got, ok := mustGet(t, s, key)
	if !ok {
		t.Errorf("%q is absent, want %q", key, want)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%q = %q, want %q", key, got, want)
	}
}

func wantAbsent(t *testing.T, s tenant.RegistryStore, key string) {
	t.Helper()
	if got, ok := mustGet(t, s, key); ok {
		t.Errorf("%q = %q, want it absent", key, got)
	}
}

func testRegistryRoundTrip(t *testing.T, s tenant.RegistryStore, _ *Clock) {
	for _, tt := range []struct {
		name, key string
		value     []byte
	}{
		{"json", "ae:3101123456", []byte(`{"found":true,"value":{"nombre":"ÑANDÚ S.A."}}`)},
		{"every byte", "bytes", allBytes()},
		{"NUL only", "nul", []byte{0}},
		{"empty", "empty", []byte{}},
		{"large", "large", bytes.Repeat(allBytes(), 4096)}, // 1 MiB
		{"key with spaces, quotes and accents", `cabys:q=café "molido" 'tostado' %_\`, []byte("x")},
		{"empty key", "", []byte("the empty key is a key")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustPut(t, s, tt.key, tt.value, time.Hour)
			wantValue(t, s, tt.key, tt.value)
		})
	}
}

func testRegistryMissing(t *testing.T, s tenant.RegistryStore, _ *Clock) {
	wantAbsent(t, s, "ae:nobody")
	mustPut(t, s, "ae:somebody", []byte("x"), 0)
	// Keys match exactly, not as patterns or prefixes.
	for _, k := range []string{"ae:somebod", "ae:somebody ", "AE:SOMEBODY", "ae:%", "ae:somebod_"} {
		wantAbsent(t, s, k)
	}
}

func testRegistryOverwrite(t *testing.T, s tenant.RegistryStore, c *Clock) {
	for _, tt := range []struct {
		name        string
		first, then time.Duration
		after       time.Duration // the clock's advance after the second put
		wantPresent bool
	}{
		{"a short keep made never", time.Minute, 0, 24 * time.Hour, true},
		{"never made a short keep", 0, time.Minute, 2 * time.Minute, false},
		{"a short keep made longer", time.Minute, time.Hour, 30 * time.Minute, true},
		{"a long keep made shorter", time.Hour, time.Minute, 30 * time.Minute, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "k:" + tt.name
			mustPut(t, s, key, []byte("first"), tt.first)
			mustPut(t, s, key, []byte("second, longer than the first"), tt.then)
			wantValue(t, s, key, []byte("second, longer than the first"))
			c.Advance(tt.after)
			if tt.wantPresent {
				wantValue(t, s, key, []byte("second, longer than the first"))
			} else {
				wantAbsent(t, s, key)
			}
		})
	}
	// A value can shrink to nothing too.
	mustPut(t, s, "shrinks", allBytes(), 0)
	mustPut(t, s, "shrinks", []byte{}, 0)
	wantValue(t, s, "shrinks", []byte{})
}

func testRegistryExpiry(t *testing.T, s tenant.RegistryStore, c *Clock) {
	const keep = 10 * time.Minute
	mustPut(t, s, "tc:2026-03-14", []byte("503.2"), keep)
	mustPut(t, s, "other", []byte("kept longer"), 2*keep)
	for _, tt := range []struct {
		at   time.Duration // since the put
		want bool
	}{
		{0, true},
		{keep - time.Millisecond, true},
		{keep, false}, // forgotten at keep, not a moment after
		{keep + time.Hour, false},
	} {
		c.Advance(registryBase.Add(tt.at).Sub(c.Now())) // the times ascend
		_, ok := mustGet(t, s, "tc:2026-03-14")
		if ok != tt.want {
			t.Errorf("%s after the put: present %v, want %v", tt.at, ok, tt.want)
		}
	}
	// Forgotten is absent, not gone for good: a new put brings it back.
	mustPut(t, s, "tc:2026-03-14", []byte("504.1"), keep)
	wantValue(t, s, "tc:2026-03-14", []byte("504.1"))
	c.Advance(registryBase.Add(2*keep - time.Millisecond).Sub(c.Now()))
	wantValue(t, s, "other", []byte("kept longer"))
}

func testRegistryNeverForget(t *testing.T, s tenant.RegistryStore, c *Clock) {
	mustPut(t, s, "tc:2020-01-02", []byte("560.1"), 0)
	mustPut(t, s, "fresh", []byte("an hour"), time.Hour)
	c.Advance(100 * 365 * 24 * time.Hour)
	wantValue(t, s, "tc:2020-01-02", []byte("560.1"))
	wantAbsent(t, s, "fresh")
	// Purging at any time leaves it.
	if _, err := s.PurgeRegistry(context.Background(), c.Now().AddDate(1000, 0, 0), 100); err != nil {
		t.Fatalf("PurgeRegistry: %v", err)
	}
	wantValue(t, s, "tc:2020-01-02", []byte("560.1"))
}

func testRegistryNegativeKeep(t *testing.T, s tenant.RegistryStore, _ *Clock) {
	if err := s.RegistryPut(context.Background(), "neg", []byte("x"), -time.Second); err == nil {
		t.Error("RegistryPut with a negative keep succeeded")
	}
	wantAbsent(t, s, "neg")
	// Nor does it touch a stored value.
	mustPut(t, s, "neg", []byte("kept"), 0)
	if err := s.RegistryPut(context.Background(), "neg", []byte("y"), -time.Second); err == nil {
		t.Error("RegistryPut with a negative keep succeeded")
	}
	wantValue(t, s, "neg", []byte("kept"))
}

func testRegistryManyKeys(t *testing.T, s tenant.RegistryStore, c *Clock) {
	const workers, each = 8, 40
	value := func(w, i int) []byte { return fmt.Appendf(nil, "value %d/%d\x00%s", w, i, strings.Repeat("v", i)) }
	keep := func(i int) time.Duration {
		if i%2 == 0 {
			return 0
		}
		return time.Duration(i) * time.Minute
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := s.RegistryPut(context.Background(), fmt.Sprintf("k%d:%d", w, i), value(w, i), keep(i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent RegistryPut: %v", err)
	}
	for w := range workers {
		for i := range each {
			wantValue(t, s, fmt.Sprintf("k%d:%d", w, i), value(w, i))
		}
	}
	// 20 minutes on, the odd keys kept less than that are gone.
	c.Advance(20 * time.Minute)
	for w := range workers {
		for i := range each {
			k := fmt.Sprintf("k%d:%d", w, i)
			if i%2 == 1 && i <= 20 {
				wantAbsent(t, s, k)
			} else {
				wantValue(t, s, k, value(w, i))
			}
		}
	}
}

func testRegistryPurge(t *testing.T, s tenant.RegistryStore, c *Clock) {
	ctx := context.Background()
	// Ten rows forgotten at base+1m … base+10m, five never, five fresh.
	for i := range 10 {
		mustPut(t, s, fmt.Sprintf("old%d", i), []byte("old"), time.Duration(i+1)*time.Minute)
	}
	for i := range 5 {
		mustPut(t, s, fmt.Sprintf("never%d", i), []byte("never"), 0)
		mustPut(t, s, fmt.Sprintf("fresh%d", i), []byte("fresh"), time.Hour)
	}
	purge := func(at time.Duration, limit, want int) {
		t.Helper()
		n, err := s.PurgeRegistry(ctx, registryBase.Add(at), limit)
		if err != nil {
			t.Fatalf("PurgeRegistry: %v", err)
		}
		if n != want {
			t.Errorf("PurgeRegistry(base+%s, %d) deleted %d, want %d", at, limit, n, want)
		}
	}
	purge(30*time.Second, 100, 0) // nothing forgotten yet
	purge(5*time.Minute, 100, 5)  // old0…old4: forgotten at or before the time
	purge(30*time.Minute, 2, 2)   // a batch
	purge(30*time.Minute, 0, 0)   // no batch at all
	purge(30*time.Minute, 100, 3) // the rest of old
	purge(30*time.Minute, 100, 0) // nothing left
	purge(59*time.Minute, 100, 0) // fresh is still fresh
	c.Advance(30 * time.Minute)
	for i := range 5 {
		wantValue(t, s, fmt.Sprintf("never%d", i), []byte("never"))
		wantValue(t, s, fmt.Sprintf("fresh%d", i), []byte("fresh"))
	}

	// A batch takes the longest forgotten first. Both rows are still
	// readable by the store's clock, so a deleted one shows as absent.
	mustPut(t, s, "later", []byte("x"), 2*time.Minute)
	mustPut(t, s, "sooner", []byte("x"), time.Minute)
	n, err := s.PurgeRegistry(ctx, c.Now().Add(time.Hour), 1)
	if err != nil || n != 1 {
		t.Fatalf("PurgeRegistry = %d, %v; want 1", n, err)
	}
	wantAbsent(t, s, "sooner")
	wantValue(t, s, "later", []byte("x"))
}

// testRegistryPutPurges: a store's puts delete forgotten rows every
// tenant.RegistryPurgeEvery puts, not before.
func testRegistryPutPurges(t *testing.T, s tenant.RegistryStore, c *Clock) {
	ctx := context.Background()
	const expired = 10
	for i := range expired {
		mustPut(t, s, fmt.Sprintf("old%d", i), []byte("old"), time.Minute)
	}
	c.Advance(2 * time.Minute)
	for i := expired; i < tenant.RegistryPurgeEvery-1; i++ {
		mustPut(t, s, fmt.Sprintf("new%d", i), []byte("new"), 0)
	}
	// RegistryPurgeEvery-1 puts so far: the forgotten rows are all there
	// (this purge deletes one to show it; it is not a put).
	if n, err := s.PurgeRegistry(ctx, c.Now(), 1); err != nil || n != 1 {
		t.Fatalf("after %d puts PurgeRegistry = %d, %v; want 1 (the forgotten rows kept)", tenant.RegistryPurgeEvery-1, n, err)
	}
	mustPut(t, s, "the last", []byte("new"), 0)
	if n, err := s.PurgeRegistry(ctx, c.Now(), 100); err != nil || n != 0 {
		t.Errorf("after %d puts PurgeRegistry = %d, %v; want 0 (the put deleted them)", tenant.RegistryPurgeEvery, n, err)
	}
	wantValue(t, s, "the last", []byte("new"))
}

func testRegistryAdapter(t *testing.T, s tenant.RegistryStore, c *Clock) {
	ctx := context.Background()
	var cache registry.Cache = tenant.RegistryCache{Store: s}
	for _, tt := range []struct {
		key  string
		keep time.Duration
	}{{"a", time.Minute}, {"b", 0}} {
		if err := cache.Set(ctx, tt.key, allBytes(), tt.keep); err != nil {
			t.Fatalf("Set(%q): %v", tt.key, err)
		}
		v, ok, err := cache.Get(ctx, tt.key)
		if err != nil || !ok || !bytes.Equal(v, allBytes()) {
			t.Errorf("Get(%q) = %q, %v, %v; want every byte", tt.key, v, ok, err)
		}
	}
	wantValue(t, s, "b", allBytes()) // the store's own row
	c.Advance(time.Minute)
	if v, ok, err := cache.Get(ctx, "a"); err != nil || ok {
		t.Errorf("Get(a) after its keep = %q, %v, %v; want absent", v, ok, err)
	}
	if err := cache.Set(ctx, "neg", nil, -1); err == nil {
		t.Error("Set with a negative keep succeeded")
	}
}
