package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"facturad/tenant"
	"facturad/tenant/seal"
)

// RekeyStore is a store that keeps derived keys and can be re-keyed.
type RekeyStore interface {
	tenant.Store
	tenant.KeyStore
}

// RunRekey checks a master-key rotation over a store (tenant.Rekey and
// tenant.DerivedKey through the tenant.KeyStore methods). open must return
// a fresh, empty, migrated store for each call.
func RunRekey(t *testing.T, open func(t *testing.T) RekeyStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s RekeyStore, k rekeyKeys)
	}{
		{"ok/rekey moves every sealed value and keeps the plain text", testRekeyAll},
		{"ok/a company updated during the rekey is re-wrapped as updated", testRekeyConcurrentUpdate},
		{"ok/a certificate renewed under the new key during the rekey leaves the password to move", testRekeyCertificateRenewed},
		{"ok/an interrupted rekey is finished by a rerun", testRekeyResumed},
		{"error/a value under no key is reported and the others are done", testRekeyUnopenable},
		{"ok/derived keys are stored once and outlive the rotation", testDerivedKeys},
		{"ok/webhook secrets are re-wrapped", testRekeyWebhooks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t), newRekeyKeys(t))
		})
	}
}

// rekeyKeys are the sealers of one rotation: under the old key, under the
// new key with the old as previous (a rotating replica), the new key alone.
type rekeyKeys struct {
	old, rotating, newOnly *seal.Sealer
}

func newRekeyKeys(t *testing.T) rekeyKeys {
	t.Helper()
	oldKey, newKey := randomKey(t), randomKey(t)
	var k rekeyKeys
	var err error
	if k.old, err = seal.New(oldKey); err != nil {
		t.Fatal(err)
	}
	if k.rotating, err = seal.NewWithPrevious(newKey, oldKey); err != nil {
		t.Fatal(err)
	}
	if k.newOnly, err = seal.New(newKey); err != nil {
		t.Fatal(err)
	}
	return k
}

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, seal.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// secrets are one company's plain secrets.
type secrets struct{ password, certificate, pin string }

func secretsOf(id int64, tag string) secrets {
	return secrets{
		password:    fmt.Sprintf("clave %d %s", id, tag),
		certificate: strings.Repeat(fmt.Sprintf("p12 %d %s;", id, tag), 200),
		pin:         fmt.Sprintf("%04d", id),
	}
}

// sealedCompany creates a company whose secrets are sealed by sealer.
func sealedCompany(t *testing.T, s tenant.Store, sealer *seal.Sealer, sec secrets) tenant.Company {
	t.Helper()
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c := company(id, fmt.Sprintf("Sellada %d", id))
	c.SealedContrasenaHacienda = sealValue(t, sealer, id, tenant.PurposeHaciendaPassword, sec.password)
	c.SealedCertificate = sealValue(t, sealer, id, tenant.PurposeCertificate, sec.certificate)
	c.SealedCertificatePIN = sealValue(t, sealer, id, tenant.PurposeCertificatePIN, sec.pin)
	b, u := branch("001"), user(fmt.Sprintf("sellada-%d", id))
	mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))
	stored, err := s.Company(ctx, id)
	mustNot(t, "Company", err)
	return stored
}

func sealValue(t *testing.T, sealer *seal.Sealer, id int64, purpose, v string) []byte {
	t.Helper()
	b, err := sealer.Seal(id, purpose, []byte(v))
	mustNot(t, "Seal", err)
	return b
}

// checkSecrets fails unless company id's secrets open with sealer to sec,
// and its certificate version and update time are want's.
func checkSecrets(t *testing.T, s tenant.Store, sealer *seal.Sealer, want tenant.Company, sec secrets) {
	t.Helper()
	c, err := s.Company(context.Background(), want.ID)
	mustNot(t, "Company", err)
	for _, x := range []struct {
		purpose, want string
		sealed        []byte
	}{
		{tenant.PurposeHaciendaPassword, sec.password, c.SealedContrasenaHacienda},
		{tenant.PurposeCertificate, sec.certificate, c.SealedCertificate},
		{tenant.PurposeCertificatePIN, sec.pin, c.SealedCertificatePIN},
	} {
		got, err := sealer.Open(c.ID, x.purpose, x.sealed)
		if err != nil {
			t.Errorf("company %d %s: %v", c.ID, x.purpose, err)
			continue
		}
		if string(got) != x.want {
			t.Errorf("company %d %s: plain text changed", c.ID, x.purpose)
		}
	}
	if c.CertificateVersion != want.CertificateVersion || !c.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("company %d: version %d updated %v, want %d and %v (a rewrap is not an update)",
			c.ID, c.CertificateVersion, c.UpdatedAt, want.CertificateVersion, want.UpdatedAt)
	}
}

func testRekeyAll(t *testing.T, s RekeyStore, k rekeyKeys) {
	ctx := context.Background()
	// Companies without secrets have nothing to re-wrap.
	var cs []tenant.Company
	for range 3 {
		c := sealedCompany(t, s, k.old, secrets{})
		cs = append(cs, sealedCompany(t, s, k.old, secretsOf(c.ID+1, "a")))
	}
	authKey := []byte("0123456789abcdef0123456789abcdef")
	if _, err := tenant.DerivedKey(ctx, s, k.old, "auth", func() ([]byte, error) { return bytes.Clone(authKey), nil }); err != nil {
		t.Fatal(err)
	}

	res, err := tenant.Rekey(ctx, s, k.rotating)
	mustNot(t, "Rekey", err)
	// 3 companies with secrets and 1 key changed; 3 without skipped.
	if res != (tenant.RekeyResult{Changed: 4, Skipped: 3, Companies: 6, Keys: 1}) {
		t.Errorf("Rekey = %+v, want 4 changed and 3 skipped of 6 companies and 1 key", res)
	}
	for _, c := range cs {
		checkSecrets(t, s, k.newOnly, c, secretsOf(c.ID, "a"))
	}
	got, err := tenant.DerivedKey(ctx, s, k.newOnly, "auth", func() ([]byte, error) { return nil, errors.New("derived again") })
	if err != nil || !bytes.Equal(got, authKey) {
		t.Errorf("derived key after the rotation = %x, %v", got, err)
	}

	again, err := tenant.Rekey(ctx, s, k.rotating)
	mustNot(t, "second Rekey", err)
	if again != (tenant.RekeyResult{Skipped: 7, Companies: 6, Keys: 1}) {
		t.Errorf("second Rekey = %+v, want everything skipped", again)
	}
}

// casStore runs before once, just before the first compare-and-set of
// company target, as another replica's update landing between the rekey's
// read and its write.
type casStore struct {
	RekeyStore
	target int64
	once   sync.Once
	before func()
}

func (c *casStore) ReplaceSealedRow(ctx context.Context, old, next tenant.SealedRow) (bool, error) {
	if old.CompanyID == c.target {
		c.once.Do(c.before)
	}
	return c.RekeyStore.ReplaceSealedRow(ctx, old, next)
}

func testRekeyConcurrentUpdate(t *testing.T, s RekeyStore, k rekeyKeys) {
	ctx := context.Background()
	first := sealedCompany(t, s, k.old, secretsOf(1, "first"))
	target := sealedCompany(t, s, k.old, secretsOf(2, "before"))
	// A replica still on the old key uploads a new certificate and
	// password meanwhile: the rekey must not put back what it read, and
	// must leave the new values under the new key.
	updated := secretsOf(2, "during")
	cs := &casStore{RekeyStore: s, target: target.ID, before: func() {
		c, err := s.Company(ctx, target.ID)
		mustNot(t, "Company", err)
		c.SealedContrasenaHacienda = sealValue(t, k.old, c.ID, tenant.PurposeHaciendaPassword, updated.password)
		c.SealedCertificate = sealValue(t, k.old, c.ID, tenant.PurposeCertificate, updated.certificate)
		c.SealedCertificatePIN = sealValue(t, k.old, c.ID, tenant.PurposeCertificatePIN, updated.pin)
		mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &c, true))
		target = c
	}}
	res, err := tenant.Rekey(ctx, cs, k.rotating)
	mustNot(t, "Rekey", err)
	if res != (tenant.RekeyResult{Changed: 2, Companies: 2}) {
		t.Errorf("Rekey = %+v, want 2 changed", res)
	}
	checkSecrets(t, s, k.newOnly, first, secretsOf(1, "first"))
	checkSecrets(t, s, k.newOnly, target, updated)
	if target.CertificateVersion != 2 {
		t.Errorf("certificate version after the concurrent upload = %d, want 2", target.CertificateVersion)
	}
}

// testRekeyCertificateRenewed: a replica already on the new key renews the
// certificate (and its PIN) between the rekey's read and its write. Read
// again, the row has two values already under the new key and one, the
// tax authority's password, still under the old: that one alone must move,
// or it would stay under a key that is about to be retired.
func testRekeyCertificateRenewed(t *testing.T, s RekeyStore, k rekeyKeys) {
	ctx := context.Background()
	before := secretsOf(1, "before")
	target := sealedCompany(t, s, k.old, before)
	renewed := secrets{password: before.password, certificate: secretsOf(1, "renewed").certificate, pin: "9876"}
	cs := &casStore{RekeyStore: s, target: target.ID, before: func() {
		c, err := s.Company(ctx, target.ID)
		mustNot(t, "Company", err)
		c.SealedCertificate = sealValue(t, k.rotating, c.ID, tenant.PurposeCertificate, renewed.certificate)
		c.SealedCertificatePIN = sealValue(t, k.rotating, c.ID, tenant.PurposeCertificatePIN, renewed.pin)
		mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &c, true))
		target = c
	}}
	res, err := tenant.Rekey(ctx, cs, k.rotating)
	mustNot(t, "Rekey", err)
	if res != (tenant.RekeyResult{Changed: 1, Companies: 1}) {
		t.Errorf("Rekey = %+v, want 1 changed", res)
	}
	checkSecrets(t, s, k.newOnly, target, renewed)
}

// cancelAfter is a Rewrapper that cancels the run after n values changed,
// as a rekey killed half-way.
type cancelAfter struct {
	tenant.Rewrapper
	n      int64
	seen   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Rewrap(companyID int64, purpose string, sealed []byte) ([]byte, bool, error) {
	out, changed, err := c.Rewrapper.Rewrap(companyID, purpose, sealed)
	if changed && c.seen.Add(1) == c.n {
		c.cancel()
	}
	return out, changed, err
}

func testRekeyResumed(t *testing.T, s RekeyStore, k rekeyKeys) {
	const companies = 120 // more than one batch
	var cs []tenant.Company
	for i := range companies {
		cs = append(cs, sealedCompany(t, s, k.old, secretsOf(int64(i+1), "r")))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled at the 3×50th value: the 50th company's write fails.
	killed := &cancelAfter{Rewrapper: k.rotating, n: 3 * 50, cancel: cancel}
	res, err := tenant.Rekey(ctx, s, killed)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Rekey = %+v, %v; want context.Canceled", res, err)
	}
	if res.Changed != 49 {
		t.Errorf("interrupted Rekey changed %d rows, want 49", res.Changed)
	}

	res, err = tenant.Rekey(context.Background(), s, k.rotating)
	mustNot(t, "resumed Rekey", err)
	if res != (tenant.RekeyResult{Changed: companies - 49, Skipped: 49, Companies: companies}) {
		t.Errorf("resumed Rekey = %+v, want %d changed and 49 skipped", res, companies-49)
	}
	for i, c := range cs {
		checkSecrets(t, s, k.newOnly, c, secretsOf(int64(i+1), "r"))
	}
}

func testRekeyUnopenable(t *testing.T, s RekeyStore, k rekeyKeys) {
	stranger, err := seal.New(randomKey(t))
	mustNot(t, "seal.New", err)
	a := sealedCompany(t, s, k.old, secretsOf(1, "x"))
	lost := sealedCompany(t, s, stranger, secretsOf(2, "x"))
	b := sealedCompany(t, s, k.old, secretsOf(3, "x"))
	res, err := tenant.Rekey(context.Background(), s, k.rotating)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("company %d", lost.ID)) {
		t.Errorf("Rekey error = %v, want one naming company %d", err, lost.ID)
	}
	if res != (tenant.RekeyResult{Changed: 2, Failed: 1, Companies: 3}) {
		t.Errorf("Rekey = %+v, want 2 changed and 1 failed", res)
	}
	checkSecrets(t, s, k.newOnly, a, secretsOf(1, "x"))
	checkSecrets(t, s, k.newOnly, b, secretsOf(3, "x"))
	// The unopenable row is left as it was.
	checkSecrets(t, s, stranger, lost, secretsOf(2, "x"))
}

func testDerivedKeys(t *testing.T, s RekeyStore, k rekeyKeys) {
	ctx := context.Background()
	// Replicas starting together each derive a key of their own; the
	// first stored wins and every one of them gets it.
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() {
			got[i], errs[i] = tenant.DerivedKey(ctx, s, k.old, "credentials", func() ([]byte, error) {
				return bytes.Repeat([]byte{byte(i + 1)}, 32), nil
			})
		})
	}
	wg.Wait()
	for i := range got {
		mustNot(t, "DerivedKey", errs[i])
		if !bytes.Equal(got[i], got[0]) || len(got[i]) != 32 {
			t.Fatalf("replicas got different keys: %x and %x", got[0], got[i])
		}
	}
	names, err := s.SealedKeyNames(ctx)
	mustNot(t, "SealedKeyNames", err)
	if len(names) != 1 || names[0] != "credentials" {
		t.Errorf("SealedKeyNames = %v", names)
	}
	// Stored sealed, bound to its name.
	sealed, err := s.SealedKey(ctx, "credentials")
	mustNot(t, "SealedKey", err)
	if bytes.Contains(sealed, got[0]) {
		t.Error("the derived key is stored in clear")
	}
	if _, err := k.old.Open(0, "derived-key other", sealed); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("a stored key opened under another name: %v", err)
	}
	_, err = s.SealedKey(ctx, "missing")
	wantErr(t, "SealedKey of a missing name", err, tenant.ErrNotFound)

	// The new master key alone cannot open it before the rotation.
	if _, err := tenant.DerivedKey(ctx, s, k.newOnly, "credentials", nil); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("DerivedKey under the new key alone before the rekey = %v, want ErrOpen", err)
	}
	if _, err := tenant.Rekey(ctx, s, k.rotating); err != nil {
		t.Fatal(err)
	}
	after, err := tenant.DerivedKey(ctx, s, k.newOnly, "credentials", nil)
	mustNot(t, "DerivedKey after the rekey", err)
	if !bytes.Equal(after, got[0]) {
		t.Error("the derived key changed with the rotation")
	}
}

func testRekeyWebhooks(t *testing.T, s RekeyStore, k rekeyKeys) {
	ctx := context.Background()
	ws, ok := s.(interface {
		tenant.WebhookStore
		tenant.WebhookSecretStore
	})
	if !ok {
		t.Fatal("the store keeps no webhooks")
	}
	c := sealedCompany(t, s, k.old, secrets{})
	var hooks []tenant.Webhook
	for i := range 3 {
		secret := fmt.Appendf(nil, "whsec_%d", i)
		sealed, err := k.old.Seal(c.ID, tenant.PurposeWebhookSecret, secret)
		mustNot(t, "Seal", err)
		w := tenant.Webhook{CompanyID: c.ID, URL: fmt.Sprintf("https://hooks.example/%d", i), Eventos: []string{"documento.aceptado"}, SealedSecret: sealed}
		mustNot(t, "CreateWebhook", ws.CreateWebhook(ctx, &w, 10))
		hooks = append(hooks, w)
	}
	res, err := tenant.Rekey(ctx, s, k.rotating)
	mustNot(t, "Rekey", err)
	if res.Webhooks != 3 || res.Changed != 3 {
		t.Fatalf("Rekey = %+v, want 3 webhooks re-wrapped", res)
	}
	for i, w := range hooks {
		got, err := ws.Webhook(ctx, c.ID, w.ID)
		mustNot(t, "Webhook", err)
		plain, err := k.newOnly.Open(c.ID, tenant.PurposeWebhookSecret, got.SealedSecret)
		if err != nil || string(plain) != fmt.Sprintf("whsec_%d", i) {
			t.Fatalf("webhook %d after the rotation: %q, %v", w.ID, plain, err)
		}
	}
	again, err := tenant.Rekey(ctx, s, k.rotating)
	mustNot(t, "second Rekey", err)
	if again.Changed != 0 || again.Webhooks != 3 {
		t.Fatalf("second Rekey = %+v", again)
	}
}
