package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda/registry"
	"facturad/tenant"
)

// Run checks every behaviour of the tenant.Store contract as subtests. open
// must return a fresh, empty, migrated store for each call and arrange its
// cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) tenant.Store) {
	contract[tenant.Store]{
		{"ok/ping", testPing},
		{"ok/next company id never repeats", testNextCompanyID},
		{"ok/create company branch and user", testCreateCompany},
		{"ok/user names are unique within a company only", testUsernameScope},
		{"error/create company rolls back on a taken token hash", testCreateRollbackToken},
		{"error/create company rolls back on a taken branch of itself", testCreateRollbackCompanyID},
		{"error/create company without a reserved id", testCreateUnreserved},
		{"error/one company per taxpayer identification", testIdentificationTaken},
		{"ok/update company is a full replace", testUpdateCompany},
		{"error/update company missing", testUpdateCompanyMissing},
		{"ok/validaciones registro stored, read and searched; other values refused", testValidacionesRegistro},
		{"ok/company notes and logo stored, read apart and bounded", testCompanyPrint},
		{"ok/concurrent certificate uploads get distinct versions", testConcurrentCertificates},
		{"error/company missing", testCompanyMissing},
		{"ok/search folds case and accents", testSearchFolding},
		{"ok/search takes LIKE wildcards literally", testSearchWildcards},
		{"ok/search orders by name then id", testSearchOrder},
		{"ok/search returns at most 100", testSearchLimit},
		{"ok/search filters by owner and company", testSearchFilters},
		{"ok/branches create list get", testBranches},
		{"error/branch code taken in the company", testBranchConflict},
		{"error/branch of a missing company", testBranchMissingCompany},
		{"ok/update branch is a full replace", testUpdateBranch},
		{"error/update branch", testUpdateBranchErrors},
		{"error/branch missing", testBranchMissing},
		{"ok/company branch read together", testCompanyBranch},
		{"ok/api users admin and reseller", testAPIUsersPlatform},
		{"error/api user taken username or token", testAPIUserConflict},
		{"error/api user of a missing or foreign branch", testAPIUserBadBranch},
		{"ok/api users lookups and lists", testAPIUserLookups},
		{"error/api user missing", testAPIUserMissing},
		{"ok/set api user active", testSetAPIUserActive},
		{"ok/set api user password hash only over the hash read", testSetAPIUserPasswordHash},
		{"ok/set api user token only over the token read", testSetAPIUserToken},
		{"ok/timestamps are utc and keep fractions", testTimestamps},
		{"ok/concurrent creates", testConcurrentCreates},
	}.run(t, open)
}

func testPing(t *testing.T, s tenant.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testNextCompanyID(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	seen := map[int64]bool{}
	var mu sync.Mutex
	take := func() error {
		id, err := s.NextCompanyID(ctx)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if id <= 0 {
			return fmt.Errorf("id %d is not positive", id)
		}
		if seen[id] {
			return fmt.Errorf("id %d handed out twice", id)
		}
		seen[id] = true
		return nil
	}
	for range 20 {
		mustNot(t, "NextCompanyID", take())
	}
	// A used id is not handed out again either.
	c := createCompany(t, s, "Usada S.A.", 0)
	mu.Lock()
	if seen[c.Company.ID] {
		t.Errorf("CreateCompany got id %d that was handed out before", c.Company.ID)
	}
	seen[c.Company.ID] = true
	mu.Unlock()

	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if err := take(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent NextCompanyID: %v", err)
	}
	if len(seen) != 20+1+80 {
		t.Errorf("got %d distinct ids, want %d", len(seen), 101)
	}
}

// testIdentificationTaken: claves carry the issuer's identification, so a
// second company of the same taxpayer is refused, on create and on update,
// and the refused create keeps nothing.
func testIdentificationTaken(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Primera S.A.", 0)
	second := createCompany(t, s, "Segunda S.A.", 0)

	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, "Tercera S.A."), branch("001"), user("tercera")
	c.NumeroIdentificacion = first.Company.NumeroIdentificacion
	wantErr(t, "create with a taken identification", s.CreateCompany(ctx, &c, &b, &u), tenant.ErrConflict)
	_, err = s.Company(ctx, id)
	wantErr(t, "the refused company", err, tenant.ErrNotFound)
	_, err = s.APIUserByUsername(ctx, id, "tercera")
	wantErr(t, "the refused company's user", err, tenant.ErrNotFound)

	upd := second.Company
	upd.NumeroIdentificacion = first.Company.NumeroIdentificacion
	wantErr(t, "update to a taken identification", s.UpdateCompany(ctx, &upd, false), tenant.ErrConflict)
	got, err := s.Company(ctx, second.Company.ID)
	mustNot(t, "Company", err)
	if got.NumeroIdentificacion != second.Company.NumeroIdentificacion {
		t.Errorf("a refused update changed the identification to %s", got.NumeroIdentificacion)
	}
}

func testCreateCompany(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, "Ñandú Servicios S.A."), branch("001"), user("creador")
	c.OwnerID = 42
	inC, inB, inU := c, b, u
	mustNot(t, "CreateCompany", s.CreateCompany(ctx, &c, &b, &u))

	if c.ID != id {
		t.Errorf("company id changed from %d to %d", id, c.ID)
	}
	if b.ID <= 0 || u.ID <= 0 {
		t.Fatalf("ids not set: branch %d, user %d", b.ID, u.ID)
	}
	if b.CompanyID != id || u.CompanyID != id || u.BranchID != b.ID {
		t.Errorf("references not set: branch.CompanyID %d, user.CompanyID %d, user.BranchID %d (company %d, branch %d)",
			b.CompanyID, u.CompanyID, u.BranchID, id, b.ID)
	}
	for what, ts := range map[string]time.Time{
		"company.CreatedAt": c.CreatedAt, "company.UpdatedAt": c.UpdatedAt,
		"branch.CreatedAt": b.CreatedAt, "branch.UpdatedAt": b.UpdatedAt, "user.CreatedAt": u.CreatedAt,
	} {
		if ts.IsZero() {
			t.Errorf("%s not set", what)
		}
	}

	// What was sent comes back, with the store's ids and times.
	inC.CreatedAt, inC.UpdatedAt = c.CreatedAt, c.UpdatedAt
	inB.ID, inB.CompanyID, inB.CreatedAt, inB.UpdatedAt = b.ID, id, b.CreatedAt, b.UpdatedAt
	inU.ID, inU.CompanyID, inU.BranchID, inU.CreatedAt = u.ID, id, b.ID, u.CreatedAt
	same(t, "company set by create", inC, c)
	same(t, "branch set by create", inB, b)
	same(t, "user set by create", inU, u)

	gotC, err := s.Company(ctx, id)
	mustNot(t, "Company", err)
	same(t, "stored company", inC, gotC)
	gotB, err := s.Branch(ctx, b.ID)
	mustNot(t, "Branch", err)
	same(t, "stored branch", inB, gotB)
	gotU, err := s.APIUserByTokenHash(ctx, u.TokenHash)
	mustNot(t, "APIUserByTokenHash", err)
	same(t, "stored user", inU, gotU)
}

// testCreateRollback creates a first company, then a second whose insert
// number `failing` breaks a unique rule, and checks that nothing of the
// second is kept.
func testCreateRollback(t *testing.T, s tenant.Store, breakIt func(first created, c *tenant.Company, b *tenant.Branch, u *tenant.APIUser)) {
	ctx := context.Background()
	first := createCompany(t, s, "Primera S.A.", 0)
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, "Segunda S.A."), branch("001"), user("segunda")
	breakIt(first, &c, &b, &u)
	err = s.CreateCompany(ctx, &c, &b, &u)
	wantErr(t, "CreateCompany", err, tenant.ErrConflict)

	if c.ID != first.Company.ID {
		_, err = s.Company(ctx, c.ID)
		wantErr(t, "Company of the failed create", err, tenant.ErrNotFound)
		_, err = s.Branches(ctx, c.ID)
		wantErr(t, "Branches of the failed create", err, tenant.ErrNotFound)
	}
	got, err := s.SearchCompanies(ctx, tenant.CompanyQuery{})
	mustNot(t, "SearchCompanies", err)
	if len(got) != 1 || got[0].ID != first.Company.ID || got[0].RazonSocial != "Primera S.A." {
		t.Errorf("companies after the failed create: %+v, want only the first", names(got))
	}
	bs, err := s.Branches(ctx, first.Company.ID)
	mustNot(t, "Branches", err)
	if len(bs) != 1 {
		t.Errorf("first company has %d branches after the failed create, want 1", len(bs))
	}
	users, err := s.APIUsers(ctx, first.Company.ID, 0)
	mustNot(t, "APIUsers", err)
	if len(users) != 1 || users[0].ID != first.User.ID {
		t.Errorf("first company's users after the failed create: %d, want only its own", len(users))
	}
	if u.Username != first.User.Username {
		_, err = s.APIUserByUsername(ctx, c.ID, u.Username)
		wantErr(t, "APIUserByUsername of the failed create", err, tenant.ErrNotFound)
	}

	// The store is still usable and the unique rules were the only problem.
	again := createCompany(t, s, "Tercera S.A.", 0)
	if again.Company.ID == first.Company.ID {
		t.Errorf("third company reused id %d", again.Company.ID)
	}
}

// testUsernameScope checks that a name is taken only within its company
// (or among the users without a company), so that choosing a name tells a
// tenant nothing about other tenants' users.
func testUsernameScope(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Primera S.A.", 0)
	fresh := func(name, salt string) tenant.APIUser {
		u := user(name)
		h := sha256.Sum256([]byte(salt + name))
		u.TokenHash = h[:]
		return u
	}

	// Another company may have a user of the same name, from its first
	// branch or a later one.
	id, err := s.NextCompanyID(ctx)
	mustNot(t, "NextCompanyID", err)
	c, b, u := company(id, "Segunda S.A."), branch("001"), fresh(first.User.Username, "second")
	mustNot(t, "CreateCompany with another company's user name", s.CreateCompany(ctx, &c, &b, &u))
	second := created{c, b, u}

	// Within a company the name is taken, on any of its branches.
	dup := fresh(first.User.Username, "dup")
	dup.CompanyID, dup.BranchID = first.Company.ID, first.Branch.ID
	wantErr(t, "CreateAPIUser with a name taken in the company", s.CreateAPIUser(ctx, &dup), tenant.ErrConflict)
	b2, u2 := branch("002"), fresh(first.User.Username, "branch")
	b2.CompanyID = first.Company.ID
	wantErr(t, "CreateBranch with a name taken in the company", s.CreateBranch(ctx, &b2, &u2), tenant.ErrConflict)

	// Users without a company share one scope of their own.
	op := fresh(first.User.Username, "operator")
	op.Role = tenant.RoleReseller
	mustNot(t, "CreateAPIUser of a reseller named like a branch user", s.CreateAPIUser(ctx, &op))
	op2 := fresh(first.User.Username, "operator2")
	op2.Role = tenant.RoleAdmin
	wantErr(t, "CreateAPIUser of a second operator of the same name", s.CreateAPIUser(ctx, &op2), tenant.ErrConflict)

	// A lookup by name finds the user of the scope asked for.
	for _, want := range []struct {
		company int64
		u       tenant.APIUser
	}{{first.Company.ID, first.User}, {second.Company.ID, second.User}, {0, op}} {
		got, err := s.APIUserByUsername(ctx, want.company, first.User.Username)
		mustNot(t, "APIUserByUsername", err)
		same(t, "user by name in its scope", want.u, got)
	}
	third := createCompany(t, s, "Tercera S.A.", 0)
	_, err = s.APIUserByUsername(ctx, third.Company.ID, first.User.Username)
	wantErr(t, "APIUserByUsername in a company without that name", err, tenant.ErrNotFound)
}

func testCreateRollbackToken(t *testing.T, s tenant.Store) {
	testCreateRollback(t, s, func(first created, _ *tenant.Company, _ *tenant.Branch, u *tenant.APIUser) {
		u.TokenHash = append([]byte(nil), first.User.TokenHash...)
	})
}

func testCreateRollbackCompanyID(t *testing.T, s tenant.Store) {
	// The company insert itself fails: its id is taken.
	testCreateRollback(t, s, func(first created, c *tenant.Company, _ *tenant.Branch, _ *tenant.APIUser) {
		c.ID = first.Company.ID
	})
}

func testCreateUnreserved(t *testing.T, s tenant.Store) {
	c, b, u := company(0, "Sin Id S.A."), branch("001"), user("sin-id")
	if err := s.CreateCompany(context.Background(), &c, &b, &u); err == nil {
		t.Fatal("CreateCompany with id 0 succeeded")
	}
	got, err := s.SearchCompanies(context.Background(), tenant.CompanyQuery{})
	mustNot(t, "SearchCompanies", err)
	if len(got) != 0 {
		t.Errorf("companies after the failed create: %v", names(got))
	}
}

func testUpdateCompany(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Antes S.A.", 9)
	orig := first.Company

	c := tenant.Company{
		ID:                       orig.ID,
		OwnerID:                  1234,                                        // kept from the store
		CreatedAt:                time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), // kept from the store
		TipoIdentificacion:       "01",
		NumeroIdentificacion:     "109870654",
		RazonSocial:              "Después Ltda.",
		ActividadComercial:       "",
		TipoCliente:              "",
		RazonComercial:           "",
		Provincia:                "7",
		Canton:                   "",
		Distrito:                 "",
		Barrio:                   "",
		OtrasSenas:               "",
		CodPais:                  "",
		Telefono:                 "",
		Fax:                      "",
		CorreoElectronico:        "otro@example.cr",
		MonedaLocal:              "CRC",
		MonedaExtranjera:         "EUR",
		FacturacionElectronica:   false,
		Activo:                   false,
		UsuarioHacienda:          "",
		ValidacionesRegistro:     string(registry.PolicyOff),
		SealedContrasenaHacienda: []byte{0xff, 0x00},
		SealedCertificate:        []byte("another sealed certificate"),
		SealedCertificatePIN:     []byte{0x7f},
		CertificateExpiry:        time.Date(2028, 12, 31, 23, 59, 59, 987654000, time.UTC),
		CertificateVersion:       77, // never written: the store steps the stored one
	}
	want := c
	mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &c, true))
	want.OwnerID, want.CreatedAt, want.UpdatedAt = orig.OwnerID, orig.CreatedAt, c.UpdatedAt
	want.CertificateVersion = orig.CertificateVersion + 1
	if c.UpdatedAt.IsZero() || c.UpdatedAt.Before(orig.UpdatedAt) {
		t.Errorf("UpdatedAt %v, created at %v", c.UpdatedAt, orig.UpdatedAt)
	}
	same(t, "company after update", want, c)
	got, err := s.Company(ctx, orig.ID)
	mustNot(t, "Company", err)
	same(t, "stored company after update", want, got)

	// The folded name follows the new legal name.
	found, err := s.SearchCompanies(ctx, tenant.CompanyQuery{NameKey: tenant.FoldName("DESPUÉS")})
	mustNot(t, "SearchCompanies", err)
	if len(found) != 1 {
		t.Errorf("search for the new name found %v", names(found))
	}
	found, err = s.SearchCompanies(ctx, tenant.CompanyQuery{NameKey: "antes"})
	mustNot(t, "SearchCompanies", err)
	if len(found) != 0 {
		t.Errorf("search for the old name found %v", names(found))
	}

	// Without a new certificate the stored certificate, PIN, expiry and
	// version are kept whatever the struct says, and read back into it; the
	// password can be removed; the branch is untouched.
	kept := got
	c = got
	c.SealedContrasenaHacienda, c.SealedCertificate, c.SealedCertificatePIN = nil, []byte("stale"), nil
	c.CertificateExpiry, c.CertificateVersion = time.Time{}, 0
	c.Activo, c.FacturacionElectronica = true, true
	want = c
	mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &c, false))
	want.UpdatedAt = c.UpdatedAt
	want.SealedCertificate, want.SealedCertificatePIN = kept.SealedCertificate, kept.SealedCertificatePIN
	want.CertificateExpiry, want.CertificateVersion = kept.CertificateExpiry, kept.CertificateVersion
	same(t, "company after an update without a certificate", want, c)
	got, err = s.Company(ctx, orig.ID)
	mustNot(t, "Company", err)
	same(t, "stored company after an update without a certificate", want, got)
	if got.SealedContrasenaHacienda != nil {
		t.Errorf("SealedContrasenaHacienda %x, want removed", got.SealedContrasenaHacienda)
	}

	// A new certificate may come without an expiry or PIN: they are
	// written as sent, and the version still steps.
	c = got
	c.SealedCertificate, c.SealedCertificatePIN, c.CertificateExpiry = []byte("third"), nil, time.Time{}
	want = c
	mustNot(t, "UpdateCompany", s.UpdateCompany(ctx, &c, true))
	want.UpdatedAt, want.CertificateVersion = c.UpdatedAt, kept.CertificateVersion+1
	got, err = s.Company(ctx, orig.ID)
	mustNot(t, "Company", err)
	same(t, "stored company after a third certificate", want, got)
	if !got.CertificateExpiry.IsZero() {
		t.Errorf("CertificateExpiry %v, want zero", got.CertificateExpiry)
	}
	b, err := s.Branch(ctx, first.Branch.ID)
	mustNot(t, "Branch", err)
	same(t, "branch after company update", first.Branch, b)
}

func testUpdateCompanyMissing(t *testing.T, s tenant.Store) {
	createCompany(t, s, "Existe S.A.", 0)
	c := company(987654, "Fantasma S.A.")
	wantErr(t, "UpdateCompany", s.UpdateCompany(context.Background(), &c, false), tenant.ErrNotFound)
	wantErr(t, "UpdateCompany with a certificate", s.UpdateCompany(context.Background(), &c, true), tenant.ErrNotFound)
}

func testCompanyMissing(t *testing.T, s tenant.Store) {
	c := createCompany(t, s, "Existe S.A.", 0)
	_, err := s.Company(context.Background(), c.Company.ID+1000)
	wantErr(t, "Company", err, tenant.ErrNotFound)
	_, err = s.Company(context.Background(), 0)
	wantErr(t, "Company(0)", err, tenant.ErrNotFound)
}

// names lists companies' legal names, for messages.
func names(cs []tenant.Company) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%d:%s", c.ID, c.RazonSocial)
	}
	return out
}

// search runs a search by folded name and returns the legal names found.
func search(t *testing.T, s tenant.Store, q tenant.CompanyQuery) []string {
	t.Helper()
	q.NameKey = tenant.FoldName(q.NameKey)
	got, err := s.SearchCompanies(context.Background(), q)
	mustNot(t, "SearchCompanies", err)
	out := make([]string, len(got))
	for i, c := range got {
		out[i] = c.RazonSocial
	}
	return out
}

func testSearchFolding(t *testing.T, s tenant.Store) {
	for _, n := range []string{"Ñandú Comercial S.A.", "NANDU  servicios", "Café del Valle", "Cafetería Central", "Otro Nombre"} {
		createCompany(t, s, n, 0)
	}
	tests := []struct {
		name, q string
		want    []string
	}{
		{"ok/accent and case", "ñANDÚ", []string{"NANDU  servicios", "Ñandú Comercial S.A."}},
		{"ok/plain query finds accented names", "cafe", []string{"Café del Valle", "Cafetería Central"}},
		{"ok/accented query finds plain names", "SERVÍCIOS", []string{"NANDU  servicios"}},
		{"ok/substring in the middle", "del va", []string{"Café del Valle"}},
		{"ok/collapsed spaces", "nandu   servicios", []string{"NANDU  servicios"}},
		{"ok/empty matches all", "", []string{"Café del Valle", "Cafetería Central", "NANDU  servicios", "Otro Nombre", "Ñandú Comercial S.A."}},
		{"ok/no match", "zzz", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search(t, s, tenant.CompanyQuery{NameKey: tt.q})
			// Names that fold alike order by id: compare as sets where the
			// folded names tie, as lists otherwise.
			if !slices.Equal(sortedFolded(got), sortedFolded(tt.want)) {
				t.Errorf("search %q = %q, want %q", tt.q, got, tt.want)
			}
		})
	}
}

// sortedFolded sorts names by folded name, then name, for comparisons where
// the order among equal folded names depends on ids.
func sortedFolded(ns []string) []string {
	out := slices.Clone(ns)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := strings.Compare(tenant.FoldName(a), tenant.FoldName(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

func testSearchWildcards(t *testing.T, s tenant.Store) {
	for _, n := range []string{"100% Puro", "1000 Puro", "a_b", "axb", `back\slash`, "backslash"} {
		createCompany(t, s, n, 0)
	}
	tests := []struct {
		name, q string
		want    []string
	}{
		{"ok/percent is literal", "100%", []string{"100% Puro"}},
		{"ok/percent alone is literal", "%", []string{"100% Puro"}},
		{"ok/underscore is literal", "a_b", []string{"a_b"}},
		{"ok/underscore alone is literal", "_", []string{"a_b"}},
		{"ok/backslash is literal", `k\s`, []string{`back\slash`}},
		{"ok/plain", "puro", []string{"100% Puro", "1000 Puro"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := search(t, s, tenant.CompanyQuery{NameKey: tt.q}); !slices.Equal(got, tt.want) {
				t.Errorf("search %q = %q, want %q", tt.q, got, tt.want)
			}
		})
	}
}

func testSearchOrder(t *testing.T, s tenant.Store) {
	var made []tenant.Company
	for _, n := range []string{"Zeta S.A.", "Igual S.A.", "álamo S.A.", "Beta S.A.", "IGUAL s.a.", "Igual S.A.", "alfa"} {
		made = append(made, createCompany(t, s, n, 0).Company)
	}
	want := slices.Clone(made)
	slices.SortFunc(want, func(a, b tenant.Company) int {
		if c := strings.Compare(tenant.FoldName(a.RazonSocial), tenant.FoldName(b.RazonSocial)); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	got, err := s.SearchCompanies(context.Background(), tenant.CompanyQuery{})
	mustNot(t, "SearchCompanies", err)
	if !slices.Equal(names(got), names(want)) {
		t.Errorf("order:\n got %q\nwant %q", names(got), names(want))
	}
	got, err = s.SearchCompanies(context.Background(), tenant.CompanyQuery{NameKey: "igual"})
	mustNot(t, "SearchCompanies", err)
	if len(got) != 3 || !(got[0].ID < got[1].ID && got[1].ID < got[2].ID) {
		t.Errorf("equal names not ordered by id: %q", names(got))
	}
}

func testSearchLimit(t *testing.T, s tenant.Store) {
	for i := range 150 {
		createCompany(t, s, fmt.Sprintf("Empresa %03d", i), 0)
	}
	tests := []struct {
		name  string
		limit int
		want  int
	}{
		{"ok/no limit is 100", 0, 100},
		{"ok/negative is 100", -5, 100},
		{"ok/smaller limit", 10, 10},
		{"ok/larger limit is 100", 500, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SearchCompanies(context.Background(), tenant.CompanyQuery{NameKey: "empresa", Limit: tt.limit})
			mustNot(t, "SearchCompanies", err)
			if len(got) != tt.want {
				t.Fatalf("got %d companies, want %d", len(got), tt.want)
			}
			// The first ones in order, not any of them.
			for i, c := range got {
				if w := fmt.Sprintf("Empresa %03d", i); c.RazonSocial != w {
					t.Fatalf("result %d is %q, want %q", i, c.RazonSocial, w)
				}
			}
		})
	}
}

func testSearchFilters(t *testing.T, s tenant.Store) {
	const reseller, other = 7, 8
	a := createCompany(t, s, "Alfa del Revendedor", reseller).Company
	b := createCompany(t, s, "Beta del Revendedor", reseller).Company
	c := createCompany(t, s, "Gama de Otro", other).Company
	d := createCompany(t, s, "Delta del Admin", 0).Company
	owner := func(id int64) *int64 { return &id }
	tests := []struct {
		name string
		q    tenant.CompanyQuery
		want []tenant.Company
	}{
		{"ok/owner", tenant.CompanyQuery{OwnerID: owner(reseller)}, []tenant.Company{a, b}},
		{"ok/owner and name", tenant.CompanyQuery{OwnerID: owner(reseller), NameKey: "beta"}, []tenant.Company{b}},
		{"ok/owner zero is the admin's", tenant.CompanyQuery{OwnerID: owner(0)}, []tenant.Company{d}},
		{"ok/owner without companies", tenant.CompanyQuery{OwnerID: owner(99)}, nil},
		{"ok/company", tenant.CompanyQuery{CompanyID: c.ID}, []tenant.Company{c}},
		{"ok/company and name", tenant.CompanyQuery{CompanyID: c.ID, NameKey: "gama"}, []tenant.Company{c}},
		{"ok/company and another name", tenant.CompanyQuery{CompanyID: c.ID, NameKey: "alfa"}, nil},
		{"ok/company and its owner", tenant.CompanyQuery{CompanyID: a.ID, OwnerID: owner(reseller)}, []tenant.Company{a}},
		{"ok/company of another owner", tenant.CompanyQuery{CompanyID: c.ID, OwnerID: owner(reseller)}, nil},
		{"ok/missing company", tenant.CompanyQuery{CompanyID: d.ID + 100}, nil},
		{"ok/name across owners", tenant.CompanyQuery{NameKey: "del"}, []tenant.Company{a, b, d}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SearchCompanies(context.Background(), tt.q)
			mustNot(t, "SearchCompanies", err)
			if !slices.Equal(names(got), names(tt.want)) {
				t.Errorf("got %q, want %q", names(got), names(tt.want))
			}
			for i := range got {
				if i < len(tt.want) {
					same(t, "search result", tt.want[i], got[i])
				}
			}
		})
	}
}

func testBranches(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Sucursales S.A.", 0)
	other := createCompany(t, s, "Otra S.A.", 0)
	want := []tenant.Branch{first.Branch}
	for _, code := range []string{"003", "002"} {
		b, u := branch(code), user("branch-user-"+code)
		b.CompanyID = first.Company.ID
		b.Activo = code == "003"
		b.VerMonedaExtranjera = false
		b.Barrio = "" // may be empty
		in := b
		mustNot(t, "CreateBranch", s.CreateBranch(ctx, &b, &u))
		if b.ID <= 0 || b.CreatedAt.IsZero() || b.UpdatedAt.IsZero() {
			t.Fatalf("CreateBranch did not set id or times: %+v", b)
		}
		if u.ID <= 0 || u.CompanyID != first.Company.ID || u.BranchID != b.ID || u.CreatedAt.IsZero() {
			t.Errorf("CreateBranch user: id %d company %d branch %d created %v", u.ID, u.CompanyID, u.BranchID, u.CreatedAt)
		}
		in.ID, in.CreatedAt, in.UpdatedAt = b.ID, b.CreatedAt, b.UpdatedAt
		same(t, "branch set by create", in, b)
		got, err := s.Branch(ctx, b.ID)
		mustNot(t, "Branch", err)
		same(t, "stored branch", in, got)
		gu, err := s.APIUserByUsername(ctx, first.Company.ID, u.Username)
		mustNot(t, "APIUserByUsername", err)
		same(t, "branch user", u, gu)
		want = append(want, in)
	}
	// The same code in another company is fine.
	b, u := branch("002"), user("other-002")
	b.CompanyID = other.Company.ID
	mustNot(t, "CreateBranch in another company", s.CreateBranch(ctx, &b, &u))

	got, err := s.Branches(ctx, first.Company.ID)
	mustNot(t, "Branches", err)
	if len(got) != len(want) {
		t.Fatalf("Branches: %d, want %d", len(got), len(want))
	}
	for i := range want {
		same(t, fmt.Sprintf("branch %d in the list", i), want[i], got[i])
	}
	got, err = s.Branches(ctx, other.Company.ID)
	mustNot(t, "Branches", err)
	if len(got) != 2 || got[0].Sucursal != "001" || got[1].Sucursal != "002" || got[0].ID >= got[1].ID {
		t.Errorf("other company's branches: %+v", got)
	}
}

func testBranchConflict(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Choque S.A.", 0)
	b, u := branch("001"), user("choque-001")
	b.CompanyID = first.Company.ID
	wantErr(t, "CreateBranch with a taken code", s.CreateBranch(ctx, &b, &u), tenant.ErrConflict)
	_, err := s.APIUserByUsername(ctx, first.Company.ID, "choque-001")
	wantErr(t, "user of the failed branch", err, tenant.ErrNotFound)
	bs, err := s.Branches(ctx, first.Company.ID)
	mustNot(t, "Branches", err)
	if len(bs) != 1 {
		t.Errorf("%d branches after the conflict, want 1", len(bs))
	}

	// A taken username rolls the new branch back too.
	b, u = branch("002"), user(first.User.Username)
	u.TokenHash = []byte("a fresh token digest of 32 bytes")
	b.CompanyID = first.Company.ID
	wantErr(t, "CreateBranch with a taken username", s.CreateBranch(ctx, &b, &u), tenant.ErrConflict)
	bs, err = s.Branches(ctx, first.Company.ID)
	mustNot(t, "Branches", err)
	if len(bs) != 1 {
		t.Errorf("%d branches after the user conflict, want 1", len(bs))
	}
}

func testBranchMissingCompany(t *testing.T, s tenant.Store) {
	b, u := branch("001"), user("huerfano")
	b.CompanyID = 424242
	wantErr(t, "CreateBranch", s.CreateBranch(context.Background(), &b, &u), tenant.ErrNotFound)
	_, err := s.APIUserByUsername(context.Background(), 424242, "huerfano")
	wantErr(t, "user of the failed branch", err, tenant.ErrNotFound)
}

func testUpdateBranch(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Cambios S.A.", 0)
	orig := first.Branch
	b := tenant.Branch{
		ID:                  orig.ID,
		CompanyID:           0,                                           // zero: the stored company is kept
		CreatedAt:           time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), // kept from the store
		Sucursal:            "005",
		RazonComercial:      "Nuevo nombre",
		Provincia:           "3",
		Canton:              "",
		Distrito:            "",
		Barrio:              "",
		OtrasSenas:          "",
		CodPais:             "",
		Telefono:            "",
		Fax:                 "",
		CorreoElectronico:   "",
		MonedaLocal:         "CRC",
		MonedaExtranjera:    "EUR",
		VerMonedaExtranjera: false,
		Licencia:            "",
		Activo:              false,
	}
	want := b
	mustNot(t, "UpdateBranch", s.UpdateBranch(ctx, &b))
	want.CompanyID, want.CreatedAt, want.UpdatedAt = orig.CompanyID, orig.CreatedAt, b.UpdatedAt
	if b.UpdatedAt.Before(orig.UpdatedAt) {
		t.Errorf("UpdatedAt %v before the creation's %v", b.UpdatedAt, orig.UpdatedAt)
	}
	same(t, "branch after update", want, b)
	got, err := s.Branch(ctx, orig.ID)
	mustNot(t, "Branch", err)
	same(t, "stored branch after update", want, got)

	// With its own company id it updates too.
	got.Activo, got.VerMonedaExtranjera = true, true
	want = got
	mustNot(t, "UpdateBranch with its company", s.UpdateBranch(ctx, &got))
	want.UpdatedAt = got.UpdatedAt
	again, err := s.Branch(ctx, orig.ID)
	mustNot(t, "Branch", err)
	same(t, "stored branch after the second update", want, again)
}

func testUpdateBranchErrors(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Errores S.A.", 0)
	other := createCompany(t, s, "Ajena S.A.", 0)
	second := addBranch(t, s, first.Company.ID, "002", "errores-002")

	b := second
	b.Sucursal = "001"
	wantErr(t, "UpdateBranch to a taken code", s.UpdateBranch(ctx, &b), tenant.ErrConflict)

	b = second
	b.ID = 987654
	wantErr(t, "UpdateBranch of a missing branch", s.UpdateBranch(ctx, &b), tenant.ErrNotFound)

	b = second
	b.CompanyID = other.Company.ID
	b.RazonComercial = "secuestrada"
	wantErr(t, "UpdateBranch through another company", s.UpdateBranch(ctx, &b), tenant.ErrNotFound)

	got, err := s.Branch(ctx, second.ID)
	mustNot(t, "Branch", err)
	same(t, "branch after failed updates", second, got)
}

func testBranchMissing(t *testing.T, s tenant.Store) {
	c := createCompany(t, s, "Existe S.A.", 0)
	_, err := s.Branch(context.Background(), c.Branch.ID+1000)
	wantErr(t, "Branch", err, tenant.ErrNotFound)
	_, err = s.Branches(context.Background(), c.Company.ID+1000)
	wantErr(t, "Branches of a missing company", err, tenant.ErrNotFound)
}

// CompanyBranch reads what Company and Branch read, and only a pair that
// belongs together.
func testCompanyBranch(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Emisor S.A.", 0)
	other := createCompany(t, s, "Ajeno S.A.", 0)
	b := addBranch(t, s, first.Company.ID, "002", "emisor-002")
	for _, br := range []tenant.Branch{first.Branch, b} {
		c, got, err := s.CompanyBranch(ctx, first.Company.ID, br.ID)
		mustNot(t, "CompanyBranch", err)
		wc, err := s.Company(ctx, first.Company.ID)
		mustNot(t, "Company", err)
		wb, err := s.Branch(ctx, br.ID)
		mustNot(t, "Branch", err)
		same(t, "company read with its branch", wc, c)
		same(t, "branch read with its company", wb, got)
	}
	for _, tt := range []struct {
		name              string
		company, branchID int64
	}{
		{"another company's branch", first.Company.ID, other.Branch.ID},
		{"a missing branch", first.Company.ID, b.ID + 1000},
		{"a missing company", first.Company.ID + 1000, first.Branch.ID},
	} {
		_, _, err := s.CompanyBranch(ctx, tt.company, tt.branchID)
		wantErr(t, "CompanyBranch of "+tt.name, err, tenant.ErrNotFound)
	}
}

func testAPIUsersPlatform(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	for _, role := range []tenant.Role{tenant.RoleAdmin, tenant.RoleReseller} {
		u := user("plataforma-" + string(role))
		u.Role = role
		in := u
		mustNot(t, "CreateAPIUser", s.CreateAPIUser(ctx, &u))
		if u.ID <= 0 || u.CreatedAt.IsZero() {
			t.Fatalf("CreateAPIUser did not set id or time: %+v", u)
		}
		in.ID, in.CreatedAt = u.ID, u.CreatedAt
		same(t, "user set by create", in, u)
		got, err := s.APIUserByUsername(ctx, 0, u.Username)
		mustNot(t, "APIUserByUsername", err)
		same(t, "stored "+string(role), in, got)
		got, err = s.APIUserByTokenHash(ctx, u.TokenHash)
		mustNot(t, "APIUserByTokenHash", err)
		same(t, "stored "+string(role)+" by token", in, got)
	}
}

func testAPIUserConflict(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	first := createCompany(t, s, "Usuarios S.A.", 0)
	u := user(first.User.Username)
	u.TokenHash = []byte("another 32 byte token digest....")
	u.CompanyID, u.BranchID = first.Company.ID, first.Branch.ID
	wantErr(t, "CreateAPIUser with a taken username", s.CreateAPIUser(ctx, &u), tenant.ErrConflict)

	u = user("nuevo")
	u.TokenHash = first.User.TokenHash
	u.Role = tenant.RoleReseller
	wantErr(t, "CreateAPIUser with a taken token", s.CreateAPIUser(ctx, &u), tenant.ErrConflict)

	_, err := s.APIUserByUsername(ctx, 0, "nuevo")
	wantErr(t, "APIUserByUsername of the failed create", err, tenant.ErrNotFound)
	got, err := s.APIUserByTokenHash(ctx, first.User.TokenHash)
	mustNot(t, "APIUserByTokenHash", err)
	same(t, "first user after conflicts", first.User, got)
}

func testAPIUserBadBranch(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	a := createCompany(t, s, "A S.A.", 0)
	b := createCompany(t, s, "B S.A.", 0)
	tests := []struct {
		name              string
		company, branchID int64
	}{
		{"error/branch of another company", a.Company.ID, b.Branch.ID},
		{"error/missing company", a.Company.ID + b.Company.ID + 100, a.Branch.ID},
		{"error/missing branch", a.Company.ID, a.Branch.ID + b.Branch.ID + 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := user("mal-" + strings.ReplaceAll(tt.name, " ", "-"))
			u.CompanyID, u.BranchID = tt.company, tt.branchID
			wantErr(t, "CreateAPIUser", s.CreateAPIUser(ctx, &u), tenant.ErrNotFound)
			_, err := s.APIUserByUsername(ctx, tt.company, u.Username)
			wantErr(t, "APIUserByUsername", err, tenant.ErrNotFound)
		})
	}
}

func testAPIUserLookups(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	a := createCompany(t, s, "Lista S.A.", 0)
	other := createCompany(t, s, "Aparte S.A.", 0)
	b2, u2 := branch("002"), user("lista-002-a")
	b2.CompanyID = a.Company.ID
	mustNot(t, "CreateBranch", s.CreateBranch(ctx, &b2, &u2))
	extra := []tenant.APIUser{user("lista-001-b"), user("lista-002-b"), user("lista-001-c")}
	extra[0].CompanyID, extra[0].BranchID = a.Company.ID, a.Branch.ID
	extra[1].CompanyID, extra[1].BranchID = a.Company.ID, b2.ID
	extra[2].CompanyID, extra[2].BranchID = a.Company.ID, a.Branch.ID
	extra[2].Activo = false
	for i := range extra {
		mustNot(t, "CreateAPIUser", s.CreateAPIUser(ctx, &extra[i]))
	}
	ids := func(us []tenant.APIUser) []int64 {
		out := make([]int64, len(us))
		for i, u := range us {
			out[i] = u.ID
		}
		return out
	}
	all := []tenant.APIUser{a.User, u2, extra[0], extra[1], extra[2]}
	tests := []struct {
		name              string
		company, branchID int64
		want              []tenant.APIUser
	}{
		{"ok/company", a.Company.ID, 0, all},
		{"ok/first branch", a.Company.ID, a.Branch.ID, []tenant.APIUser{a.User, extra[0], extra[2]}},
		{"ok/second branch", a.Company.ID, b2.ID, []tenant.APIUser{u2, extra[1]}},
		{"ok/other company", other.Company.ID, 0, []tenant.APIUser{other.User}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.APIUsers(ctx, tt.company, tt.branchID)
			mustNot(t, "APIUsers", err)
			if !slices.Equal(ids(got), ids(tt.want)) {
				t.Fatalf("APIUsers ids %v, want %v", ids(got), ids(tt.want))
			}
			for i := range got {
				same(t, "listed user", tt.want[i], got[i])
			}
		})
	}
	for _, u := range all {
		got, err := s.APIUserByTokenHash(ctx, u.TokenHash)
		mustNot(t, "APIUserByTokenHash", err)
		same(t, "user by token", u, got)
		got, err = s.APIUserByUsername(ctx, u.CompanyID, u.Username)
		mustNot(t, "APIUserByUsername", err)
		same(t, "user by name", u, got)
	}

	_, err := s.APIUsers(ctx, a.Company.ID, other.Branch.ID)
	wantErr(t, "APIUsers of another company's branch", err, tenant.ErrNotFound)
	_, err = s.APIUsers(ctx, a.Company.ID+other.Company.ID+100, 0)
	wantErr(t, "APIUsers of a missing company", err, tenant.ErrNotFound)
}

func testAPIUserMissing(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	c := createCompany(t, s, "Existe S.A.", 0)
	missing := user("nadie")
	_, err := s.APIUserByTokenHash(ctx, missing.TokenHash)
	wantErr(t, "APIUserByTokenHash", err, tenant.ErrNotFound)
	// A prefix of a stored digest is not a match.
	_, err = s.APIUserByTokenHash(ctx, c.User.TokenHash[:31])
	wantErr(t, "APIUserByTokenHash of a prefix", err, tenant.ErrNotFound)
	_, err = s.APIUserByUsername(ctx, c.Company.ID, "nadie")
	wantErr(t, "APIUserByUsername", err, tenant.ErrNotFound)
	_, err = s.APIUserByUsername(ctx, 0, c.User.Username)
	wantErr(t, "APIUserByUsername of a branch user among the operators", err, tenant.ErrNotFound)
	_, err = s.APIUserByUsername(ctx, c.Company.ID, strings.ToUpper(c.User.Username))
	wantErr(t, "APIUserByUsername in other case", err, tenant.ErrNotFound)
}

func testSetAPIUserActive(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	c := createCompany(t, s, "Activos S.A.", 0)
	other := createCompany(t, s, "Intactos S.A.", 0)
	for _, active := range []bool{false, true, false} {
		mustNot(t, "SetAPIUserActive", s.SetAPIUserActive(ctx, c.User.ID, active))
		got, err := s.APIUserByTokenHash(ctx, c.User.TokenHash)
		mustNot(t, "APIUserByTokenHash", err)
		if got.Activo != active {
			t.Errorf("Activo = %v after setting %v", got.Activo, active)
		}
		want := c.User
		want.Activo = active
		same(t, "user after SetAPIUserActive", want, got)
	}
	got, err := s.APIUserByUsername(ctx, other.Company.ID, other.User.Username)
	mustNot(t, "APIUserByUsername", err)
	same(t, "another user", other.User, got)
	wantErr(t, "SetAPIUserActive of a missing user", s.SetAPIUserActive(ctx, c.User.ID+other.User.ID+100, true), tenant.ErrNotFound)
}

func testSetAPIUserPasswordHash(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	c := createCompany(t, s, "Claves S.A.", 0)
	other := createCompany(t, s, "Otras Claves S.A.", 0)
	old := c.User.PasswordHash
	mustNot(t, "SetAPIUserPasswordHash", s.SetAPIUserPasswordHash(ctx, c.User.ID, old, "$hmac-sha256$v=1$nuevo"))
	got, err := s.APIUserByUsername(ctx, c.Company.ID, c.User.Username)
	mustNot(t, "APIUserByUsername", err)
	want := c.User
	want.PasswordHash = "$hmac-sha256$v=1$nuevo"
	same(t, "user after SetAPIUserPasswordHash", want, got)
	// A stale old hash changes nothing: the hash read is no longer stored.
	mustNot(t, "SetAPIUserPasswordHash with a stale hash", s.SetAPIUserPasswordHash(ctx, c.User.ID, old, "$hmac-sha256$v=1$viejo"))
	got, err = s.APIUserByUsername(ctx, c.Company.ID, c.User.Username)
	mustNot(t, "APIUserByUsername", err)
	same(t, "user after a stale SetAPIUserPasswordHash", want, got)
	got, err = s.APIUserByUsername(ctx, other.Company.ID, other.User.Username)
	mustNot(t, "APIUserByUsername", err)
	same(t, "another user", other.User, got)
}

func testSetAPIUserToken(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	c := createCompany(t, s, "Fichas S.A.", 0)
	old := c.User.TokenHash
	fresh := tenant.HashToken("a-new-token-for-the-rotation-test-000000")
	mustNot(t, "SetAPIUserToken", s.SetAPIUserToken(ctx, c.User.ID, old, fresh))
	if _, err := s.APIUserByTokenHash(ctx, old); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the old token still finds the user: %v", err)
	}
	got, err := s.APIUserByTokenHash(ctx, fresh)
	mustNot(t, "APIUserByTokenHash", err)
	want := c.User
	want.TokenHash = fresh
	same(t, "user after SetAPIUserToken", want, got)
	wantErr(t, "SetAPIUserToken over a stale token", s.SetAPIUserToken(ctx, c.User.ID, old, tenant.HashToken("another-token-000000000000000000000000")), tenant.ErrConflict)
}

func testTimestamps(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	// A store that kept whole seconds would stamp before `before` almost
	// every time; one that keeps microseconds never does.
	for i := range 5 {
		before := time.Now().Truncate(time.Microsecond)
		c := createCompany(t, s, fmt.Sprintf("Tiempo %d", i), 0)
		after := time.Now()
		for what, ts := range map[string]time.Time{
			"company.CreatedAt": c.Company.CreatedAt, "company.UpdatedAt": c.Company.UpdatedAt,
			"branch.CreatedAt": c.Branch.CreatedAt, "user.CreatedAt": c.User.CreatedAt,
		} {
			if !isUTC(ts) {
				t.Errorf("%s %v is not UTC", what, ts)
			}
			if ts.Before(before) || ts.After(after) {
				t.Errorf("%s %s outside [%s, %s]: fractions of a second lost?", what,
					ts.Format(time.RFC3339Nano), before.UTC().Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
			}
		}
		got, err := s.Company(ctx, c.Company.ID)
		mustNot(t, "Company", err)
		if !got.CreatedAt.Equal(c.Company.CreatedAt) || !got.UpdatedAt.Equal(c.Company.UpdatedAt) {
			t.Errorf("stored times %v/%v, create set %v/%v", got.CreatedAt, got.UpdatedAt, c.Company.CreatedAt, c.Company.UpdatedAt)
		}
		if !isUTC(got.CreatedAt) || !isUTC(got.UpdatedAt) || !isUTC(got.CertificateExpiry) {
			t.Errorf("stored times not UTC: %v %v %v", got.CreatedAt, got.UpdatedAt, got.CertificateExpiry)
		}
		if got.CertificateExpiry.Nanosecond() != 123456000 {
			t.Errorf("CertificateExpiry %s lost its fraction", got.CertificateExpiry.Format(time.RFC3339Nano))
		}
		gb, err := s.Branch(ctx, c.Branch.ID)
		mustNot(t, "Branch", err)
		gu, err := s.APIUserByUsername(ctx, c.Company.ID, c.User.Username)
		mustNot(t, "APIUserByUsername", err)
		if !isUTC(gb.CreatedAt) || !isUTC(gb.UpdatedAt) || !isUTC(gu.CreatedAt) {
			t.Errorf("stored branch or user times not UTC: %v %v %v", gb.CreatedAt, gb.UpdatedAt, gu.CreatedAt)
		}
		if !gb.CreatedAt.Equal(c.Branch.CreatedAt) || !gu.CreatedAt.Equal(c.User.CreatedAt) {
			t.Errorf("stored branch/user times %v/%v, create set %v/%v", gb.CreatedAt, gu.CreatedAt, c.Branch.CreatedAt, c.User.CreatedAt)
		}
	}
}

func testConcurrentCreates(t *testing.T, s tenant.Store) {
	ctx := context.Background()
	const workers, each = 6, 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		made []created
	)
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				id, err := s.NextCompanyID(ctx)
				if err != nil {
					errs <- fmt.Errorf("NextCompanyID: %w", err)
					return
				}
				c := company(id, fmt.Sprintf("Concurrente %d-%d", w, i))
				b, u := branch("001"), user(fmt.Sprintf("concurrente-%d-%d", w, i))
				if err := s.CreateCompany(ctx, &c, &b, &u); err != nil {
					errs <- fmt.Errorf("CreateCompany: %w", err)
					return
				}
				b2, u2 := branch("002"), user(fmt.Sprintf("concurrente-%d-%d-002", w, i))
				b2.CompanyID = id
				if err := s.CreateBranch(ctx, &b2, &u2); err != nil {
					errs <- fmt.Errorf("CreateBranch: %w", err)
					return
				}
				u3 := user(fmt.Sprintf("concurrente-%d-%d-extra", w, i))
				u3.CompanyID, u3.BranchID = id, b2.ID
				if err := s.CreateAPIUser(ctx, &u3); err != nil {
					errs <- fmt.Errorf("CreateAPIUser: %w", err)
					return
				}
				if _, err := s.APIUserByTokenHash(ctx, u.TokenHash); err != nil {
					errs <- fmt.Errorf("APIUserByTokenHash: %w", err)
					return
				}
				mu.Lock()
				made = append(made, created{c, b, u})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent create: %v", err)
	}
	if len(made) != workers*each {
		t.Fatalf("%d companies made, want %d", len(made), workers*each)
	}
	companies, branches := map[int64]bool{}, map[int64]bool{}
	for _, m := range made {
		if companies[m.Company.ID] || branches[m.Branch.ID] {
			t.Errorf("id handed out twice: company %d branch %d", m.Company.ID, m.Branch.ID)
		}
		companies[m.Company.ID], branches[m.Branch.ID] = true, true
		users, err := s.APIUsers(ctx, m.Company.ID, 0)
		mustNot(t, "APIUsers", err)
		if len(users) != 3 {
			t.Errorf("company %d has %d users, want 3", m.Company.ID, len(users))
		}
	}
	got, err := s.SearchCompanies(ctx, tenant.CompanyQuery{NameKey: "concurrente"})
	mustNot(t, "SearchCompanies", err)
	if len(got) != workers*each {
		t.Errorf("search finds %d companies, want %d", len(got), workers*each)
	}
}

// testConcurrentCertificates uploads certificates for one company from many
// goroutines at once, with updates that carry no certificate in between,
// all built from one stale read: every upload must get its own version, the
// versions must be the ones after the initial one, and the stored company
// must hold the certificate of the upload that got the greatest.
func testConcurrentCertificates(t *testing.T, s tenant.Store) {
	const uploads, plain = 12, 6
	ctx := context.Background()
	orig := createCompany(t, s, "Carrera S.A.", 0).Company
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions = map[int64][]byte{}
		errs     []error
	)
	for i := range uploads + plain {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := orig // every writer starts from the same, soon stale, read
			c.Telefono = fmt.Sprintf("2222%04d", i)
			upload := i < uploads
			if upload {
				c.SealedCertificate = []byte(fmt.Sprintf("certificate %d", i))
			} else {
				c.SealedCertificate = []byte("stale certificate")
			}
			err := s.UpdateCompany(ctx, &c, upload)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if !upload {
				return
			}
			if prev, ok := versions[c.CertificateVersion]; ok {
				t.Errorf("version %d given to %q and %q", c.CertificateVersion, prev, c.SealedCertificate)
			}
			versions[c.CertificateVersion] = c.SealedCertificate
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("UpdateCompany: %v", err)
	}
	for v := orig.CertificateVersion + 1; v <= orig.CertificateVersion+uploads; v++ {
		if _, ok := versions[v]; !ok {
			t.Errorf("no upload got version %d; got %v", v, slices.Sorted(maps.Keys(versions)))
		}
	}
	got, err := s.Company(ctx, orig.ID)
	mustNot(t, "Company", err)
	last := orig.CertificateVersion + uploads
	if got.CertificateVersion != last {
		t.Errorf("stored version %d, want %d", got.CertificateVersion, last)
	}
	if string(got.SealedCertificate) != string(versions[last]) {
		t.Errorf("stored certificate %q, want %q of version %d", got.SealedCertificate, versions[last], last)
	}
}

// contract is a store contract's subtests, each run on a store of its own.
type contract[S any] []struct {
	name string
	fn   func(t *testing.T, s S)
}

// run runs every subtest on a fresh store that open returns for it.
func (c contract[S]) run(t *testing.T, open func(t *testing.T) S) {
	for _, tt := range c {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}
