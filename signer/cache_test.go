package signer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/signer/certmint"
)

// memSource is an in-memory CertificateSource that counts its calls.
type memSource struct {
	mu       sync.Mutex
	certs    map[int64]memCert
	fail     error         // returned by CertificateP12 while set
	gate     chan struct{} // CertificateP12 waits for it when not nil
	p12Calls atomic.Int64
	verCalls atomic.Int64
}

type memCert struct {
	p12, pin []byte
	version  int64
}

func newMemSource() *memSource { return &memSource{certs: map[int64]memCert{}} }

func (s *memSource) put(companyID int64, p12 []byte, pin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.certs[companyID].version + 1
	s.certs[companyID] = memCert{p12: p12, pin: []byte(pin), version: v}
}

func (s *memSource) CertificateVersion(ctx context.Context, companyID int64) (int64, error) {
	s.verCalls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.certs[companyID]
	if !ok {
		return 0, errors.New("no such company")
	}
	return c.version, nil
}

func (s *memSource) CertificateP12(ctx context.Context, companyID int64) ([]byte, []byte, int64, error) {
	s.p12Calls.Add(1)
	s.mu.Lock()
	gate, fail := s.gate, s.fail
	c, ok := s.certs[companyID]
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
	}
	if fail != nil {
		return nil, nil, 0, fail
	}
	if !ok {
		return nil, nil, 0, errors.New("no such company")
	}
	return c.p12, append([]byte{}, c.pin...), c.version, nil
}

var testCA = sync.OnceValues(func() (*certmint.CA, error) {
	return certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(0), NotBefore: goldenTime.AddDate(-5, 0, 0)})
})

// mintP12 makes a company .p12 valid from nb to na, with test key i.
func mintP12(t testing.TB, i int, nb, na time.Time, pin string) *certmint.Minted {
	t.Helper()
	ca, err := testCA()
	if err != nil {
		t.Fatal(err)
	}
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: "3101123456", Name: "EMPRESA DE PRUEBA",
		PIN: pin, NotBefore: nb, NotAfter: na, CA: ca, Key: certmint.TestKey(i),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var smallDoc = []byte(`<Doc xmlns="urn:x"><A>1</A></Doc>`)

func newTestCache(t testing.TB, src CertificateSource, size int) *Cache {
	t.Helper()
	c, err := NewCache(CacheOptions{Source: src, Size: size, Clock: func() time.Time { return goldenTime }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func valid(t testing.TB, i int, pin string) *certmint.Minted {
	return mintP12(t, i, goldenTime.AddDate(-1, 0, 0), goldenTime.AddDate(1, 0, 0), pin)
}

// TestCacheParsesOnce: 1,000 concurrent signatures for one company read
// and parse its .p12 once.
func TestCacheParsesOnce(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	m := valid(t, 1, "1234")
	src.put(7, m.P12, m.PIN)
	src.gate = make(chan struct{})
	c := newTestCache(t, src, 10)

	const n = 1000
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			started.Done()
			out, err := c.Sign(context.Background(), 7, smallDoc)
			if err == nil && i%50 == 0 { // verifying a sample keeps the test quick under -race
				var res *VerifyResult
				if res, err = Verify(out); err == nil && !res.Certificate.Equal(m.Leaf) {
					err = errors.New("signed with another certificate")
				}
			}
			if err != nil {
				errs <- err
			}
		})
	}
	started.Wait()
	close(src.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := src.p12Calls.Load(); got != 1 {
		t.Errorf("CertificateP12 called %d times, want 1", got)
	}
	if got := c.Stats().Loads; got != 1 {
		t.Errorf("Loads = %d, want 1", got)
	}
}

// TestCacheSeesNewUpload: a new certificate (new version) is used by the
// very next signature, and concurrent signatures after the change reload
// it once.
func TestCacheSeesNewUpload(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	first, second := valid(t, 1, "1111"), valid(t, 2, "2222")
	src.put(1, first.P12, first.PIN)
	c := newTestCache(t, src, 10)
	ctx := context.Background()

	signWith := func() *VerifyResult {
		t.Helper()
		out, err := c.Sign(ctx, 1, smallDoc)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Verify(out)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := signWith(); !res.Certificate.Equal(first.Leaf) {
		t.Fatal("first signature not made with the first certificate")
	}
	if res := signWith(); !res.Certificate.Equal(first.Leaf) {
		t.Fatal("second signature not made with the first certificate")
	}
	if got := c.Stats().Loads; got != 1 {
		t.Fatalf("Loads = %d before the upload, want 1", got)
	}

	src.put(1, second.P12, second.PIN) // the upload, e.g. on another replica
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			out, err := c.Sign(ctx, 1, smallDoc)
			if err != nil {
				t.Error(err)
				return
			}
			res, err := Verify(out)
			if err != nil || !res.Certificate.Equal(second.Leaf) {
				t.Errorf("after the upload: %v, new certificate used: %v", err, err == nil && res.Certificate.Equal(second.Leaf))
			}
		})
	}
	wg.Wait()
	if got := c.Stats().Loads; got != 2 {
		t.Errorf("Loads = %d after the upload, want 2", got)
	}
}

func TestCacheRefusesInvalidCertificates(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	expired := mintP12(t, 1, goldenTime.AddDate(-2, 0, 0), goldenTime.AddDate(0, 0, -1), "1234")
	future := mintP12(t, 1, goldenTime.AddDate(0, 0, 1), goldenTime.AddDate(2, 0, 0), "1234")
	good := valid(t, 1, "1234")
	src.put(1, expired.P12, expired.PIN)
	src.put(2, future.P12, future.PIN)
	src.put(3, good.P12, "9999") // wrong PIN stored
	src.put(4, []byte("not a certificate"), "1234")
	c := newTestCache(t, src, 10)
	ctx := context.Background()

	for _, tt := range []struct {
		name    string
		company int64
		want    error
	}{
		{"error/expired", 1, ErrCertificateExpired},
		{"error/not yet valid", 2, ErrCertificateExpired},
		{"error/wrong PIN", 3, ErrWrongPIN},
		{"error/not PKCS12", 4, ErrNotPKCS12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 {
				if _, err := c.Sign(ctx, tt.company, smallDoc); !errors.Is(err, tt.want) {
					t.Fatalf("Sign err = %v, want %v", err, tt.want)
				}
			}
			if _, err := c.Certificate(ctx, tt.company); !errors.Is(err, tt.want) {
				t.Fatalf("Certificate err = %v, want %v", err, tt.want)
			}
		})
	}
	// A bad file is parsed once per version, not on every signature.
	if got := c.Stats().Loads; got != 4 {
		t.Errorf("Loads = %d, want 4 (one per company)", got)
	}
	// Fixing the upload fixes signing.
	src.put(3, good.P12, good.PIN)
	if _, err := c.Sign(ctx, 3, smallDoc); err != nil {
		t.Errorf("after a corrected upload: %v", err)
	}
}

func TestCacheSourceErrorsAreNotCached(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	m := valid(t, 1, "1234")
	src.put(1, m.P12, m.PIN)
	boom := errors.New("store unavailable")
	src.fail = boom
	c := newTestCache(t, src, 10)
	ctx := context.Background()
	if _, err := c.Sign(ctx, 1, smallDoc); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the source's error", err)
	}
	src.mu.Lock()
	src.fail = nil
	src.mu.Unlock()
	if _, err := c.Sign(ctx, 1, smallDoc); err != nil {
		t.Fatalf("after the store came back: %v", err)
	}
	if _, err := c.Sign(ctx, 99, smallDoc); err == nil {
		t.Fatal("unknown company signed")
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	m := valid(t, 1, "1234")
	for id := int64(1); id <= 3; id++ {
		src.put(id, m.P12, m.PIN)
	}
	c := newTestCache(t, src, 2)
	ctx := context.Background()
	for _, id := range []int64{1, 2, 1, 3} { // 2 is the least recently used when 3 arrives
		if _, err := c.Certificate(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.Entries != 2 || st.Loads != 3 {
		t.Fatalf("stats = %+v, want 2 entries after 3 loads", st)
	}
	if _, err := c.Certificate(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().Loads; got != 3 {
		t.Errorf("company 1 was reloaded (Loads = %d)", got)
	}
	if _, err := c.Certificate(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().Loads; got != 4 {
		t.Errorf("company 2 was not evicted (Loads = %d)", got)
	}
	c.Invalidate(2)
	if _, err := c.Certificate(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().Loads; got != 5 {
		t.Errorf("Invalidate did not drop the entry (Loads = %d)", got)
	}
}

func TestCacheWaiterHonoursContext(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	m := valid(t, 1, "1234")
	src.put(1, m.P12, m.PIN)
	src.gate = make(chan struct{})
	c := newTestCache(t, src, 10)

	loaded := make(chan error, 1)
	go func() {
		_, err := c.Certificate(context.Background(), 1)
		loaded <- err
	}()
	// Wait until the first caller is inside the source.
	for src.p12Calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Certificate(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("waiter err = %v, want context.Canceled", err)
	}
	close(src.gate)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
}

func TestCacheVersionCheckInterval(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	m := valid(t, 1, "1234")
	src.put(1, m.P12, m.PIN)
	c, err := NewCache(CacheOptions{Source: src, Clock: func() time.Time { return goldenTime }, VersionCheckInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := c.Certificate(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := src.verCalls.Load(); got != 0 {
		t.Errorf("version asked %d times within the interval, want 0", got)
	}
	if _, err := NewCache(CacheOptions{}); err == nil {
		t.Error("NewCache without Source succeeded")
	}
}
