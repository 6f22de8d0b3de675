package tenant_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"facturad/tenant"
)

// world is two resellers and an admin, each with a company, and the branch
// users of those companies.
type world struct {
	*bundle
	r1, r2     tenant.Principal
	a, b, c    tenantFixture // a owned by r1, b by r2, c by the admin
	principals map[string]tenant.Principal
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, bundleOpts{})
}

// newWorldWith is newWorld on a bundle made with o.
func newWorldWith(t *testing.T, o bundleOpts) *world {
	t.Helper()
	w := &world{bundle: newBundle(t, o)}
	w.r1, _ = w.newReseller(t, "reseller-one")
	w.r2, _ = w.newReseller(t, "reseller-two")
	w.a = w.newCompany(t, w.r1, "3101000001")
	w.b = w.newCompany(t, w.r2, "3101000002")
	w.c = w.newCompany(t, w.admin, "3101000003")
	w.principals = map[string]tenant.Principal{
		"admin": w.admin, "r1": w.r1, "r2": w.r2, "userA": w.a.user, "userB": w.b.user, "userC": w.c.user,
	}
	return w
}

func TestCompanyOwnership(t *testing.T) {
	w := newWorld(t)
	if w.a.created.OwnerID != w.r1.UserID || w.b.created.OwnerID != w.r2.UserID || w.c.created.OwnerID != 0 {
		t.Fatalf("owners %d %d %d", w.a.created.OwnerID, w.b.created.OwnerID, w.c.created.OwnerID)
	}
	if w.r1.Role != tenant.RoleReseller || w.a.user.Role != tenant.RoleBranch || w.admin.Role != tenant.RoleAdmin {
		t.Fatal("roles")
	}
	if w.a.user.CompanyID != w.a.created.ID || w.a.user.BranchID != w.a.created.Branch.ID {
		t.Fatalf("branch principal %+v", w.a.user)
	}
}

func TestSearchCompaniesByRole(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ids := func(cs []tenant.Company) []int64 {
		out := []int64{}
		for _, c := range cs {
			out = append(out, c.ID)
		}
		slices.Sort(out)
		return out
	}
	a, b, c := w.a.created.ID, w.b.created.ID, w.c.created.ID
	tests := []struct {
		name string
		who  string
		q    string
		want []int64
	}{
		{"ok/admin sees all", "admin", "", []int64{a, b, c}},
		{"ok/admin accent and case insensitive", "admin", "NANDU", []int64{a, b, c}},
		{"ok/admin no match", "admin", "zzz", []int64{}},
		{"ok/reseller sees its own", "r1", "", []int64{a}},
		{"ok/other reseller sees its own", "r2", "ñandú", []int64{b}},
		{"ok/branch user sees its company", "userA", "", []int64{a}},
		{"ok/branch user of admin company", "userC", "servicios", []int64{c}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := w.svc.SearchCompanies(ctx, w.principals[tt.who], tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(cs); !slices.Equal(got, tt.want) {
				t.Fatalf("ids = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTenantIsolation tries every company-scoped call as every principal on
// every company: a principal that may not see the company gets ErrNotFound
// and nothing changes.
func TestTenantIsolation(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	companies := map[string]tenantFixture{"A": w.a, "B": w.b, "C": w.c}
	allowed := map[string][]string{
		"admin": {"A", "B", "C"},
		"r1":    {"A"},
		"r2":    {"B"},
		"userA": {"A"},
		"userB": {"B"},
		"userC": {"C"},
	}
	calls := []struct {
		name string
		do   func(p tenant.Principal, f tenantFixture, n int) error
	}{
		{"Company", func(p tenant.Principal, f tenantFixture, _ int) error {
			_, err := w.svc.Company(ctx, p, f.created.ID)
			return err
		}},
		{"VisibleCompany", func(p tenant.Principal, f tenantFixture, _ int) error {
			c, err := w.svc.VisibleCompany(ctx, p, f.created.ID)
			if err == nil && c.ID != f.created.ID {
				return fmt.Errorf("company %d, want %d", c.ID, f.created.ID)
			}
			return err
		}},
		{"UpdateCompany", func(p tenant.Principal, f tenantFixture, _ int) error {
			in := companyInput(t, f.created.NumeroIdentificacion)
			in.Certificate, in.CertificatePIN = nil, nil
			_, err := w.svc.UpdateCompany(ctx, p, f.created.ID, in)
			return err
		}},
		{"Branches", func(p tenant.Principal, f tenantFixture, _ int) error {
			_, err := w.svc.Branches(ctx, p, f.created.ID)
			return err
		}},
		{"CreateBranch", func(p tenant.Principal, f tenantFixture, n int) error {
			_, _, err := w.svc.CreateBranch(ctx, p, f.created.ID, branchInput(fmt.Sprintf("%03d", 100+n)))
			return err
		}},
		{"UpdateBranch", func(p tenant.Principal, f tenantFixture, _ int) error {
			_, err := w.svc.UpdateBranch(ctx, p, f.created.ID, f.created.Branch.ID, branchInput("001"))
			return err
		}},
		{"CreateAPIUser", func(p tenant.Principal, f tenantFixture, n int) error {
			_, err := w.svc.CreateAPIUser(ctx, p, f.created.ID, f.created.Branch.ID, fmt.Sprintf("extra-user-%d", n))
			return err
		}},
		{"SetAPIUserActive", func(p tenant.Principal, f tenantFixture, _ int) error {
			return w.svc.SetAPIUserActive(ctx, p, f.created.ID, f.user.UserID, true)
		}},
	}
	n := 0
	for _, call := range calls {
		for who, p := range w.principals {
			for name, f := range companies {
				n++
				ok := slices.Contains(allowed[who], name)
				t.Run(fmt.Sprintf("%s/%s on %s", call.name, who, name), func(t *testing.T) {
					err := call.do(p, f, n)
					if ok && err != nil {
						t.Fatalf("allowed call failed: %v", err)
					}
					if !ok && !errors.Is(err, tenant.ErrNotFound) {
						t.Fatalf("err = %v, want ErrNotFound", err)
					}
				})
			}
		}
	}

	// A branch of company A reached through company B's id is not found,
	// even by an admin.
	for _, who := range []string{"admin", "userB", "r2"} {
		_, err := w.svc.UpdateBranch(ctx, w.principals[who], w.b.created.ID, w.a.created.Branch.ID, branchInput("001"))
		if !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%s: branch of A through B: %v", who, err)
		}
		_, err = w.svc.CreateAPIUser(ctx, w.principals[who], w.b.created.ID, w.a.created.Branch.ID, "crossing-"+who)
		if !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%s: user on a branch of A through B: %v", who, err)
		}
	}
	// Only the allowed principals created branches: company A has its first
	// branch plus one per allowed principal (admin, r1, userA).
	bs, err := w.svc.Branches(ctx, w.admin, w.a.created.ID)
	if err != nil || len(bs) != 4 {
		t.Fatalf("company A has %d branches (%v), want 4", len(bs), err)
	}
}

func TestCreateCompanyByRole(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.svc.CreateCompany(ctx, w.a.user, companyInput(t, "3101000009"))
	if !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("branch user creating a company: %v", err)
	}
	_, err = w.svc.CreateCompany(ctx, tenant.Principal{Role: "nobody", UserID: 99}, companyInput(t, "3101000009"))
	if !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("unknown role creating a company: %v", err)
	}
	cs, _ := w.svc.SearchCompanies(ctx, w.admin, "")
	if len(cs) != 3 {
		t.Fatalf("%d companies after refused creates", len(cs))
	}
}

func TestCreateReseller(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, who := range []string{"r1", "userA"} {
		if _, err := w.svc.CreateReseller(ctx, w.principals[who], "sneaky-"+who); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%s creating a reseller: %v", who, err)
		}
	}
	_, err := w.svc.CreateReseller(ctx, w.admin, "reseller-one")
	if fe := fieldErrors(t, err); fe["usuario"] == nil {
		t.Fatalf("taken name: %v", fe)
	}
	for _, bad := range []string{"", "ab", "has space", "colon:name", "-leading", string(make([]byte, 65))} {
		_, err := w.svc.CreateReseller(ctx, w.admin, bad)
		if fe := fieldErrors(t, err); fe["usuario"] == nil {
			t.Errorf("name %q: %v", bad, fe)
		}
	}
	cr, err := w.svc.CreateReseller(ctx, w.admin, "new.reseller@example.com")
	if err != nil {
		t.Fatal(err)
	}
	p := w.login(t, cr)
	if p.Role != tenant.RoleReseller || p.CompanyID != 0 {
		t.Fatalf("principal %+v", p)
	}
	cs, err := w.svc.SearchCompanies(ctx, p, "")
	if err != nil || len(cs) != 0 {
		t.Fatalf("a new reseller sees %d companies (%v)", len(cs), err)
	}
}

func TestBranches(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id := w.a.created.ID

	b2, cr, err := w.svc.CreateBranch(ctx, w.a.user, id, branchInput("002"))
	if err != nil {
		t.Fatal(err)
	}
	if b2.Sucursal != "002" || b2.Canton != "01" || b2.Telefono != "24445555" || !b2.Activo ||
		b2.VerMonedaExtranjera || b2.MonedaLocal != "CRC" || b2.MonedaExtranjera != "USD" || b2.CreatedAt.IsZero() {
		t.Fatalf("branch %+v", b2)
	}
	p := w.login(t, cr)
	if p.BranchID != b2.ID || p.CompanyID != id {
		t.Fatalf("new branch user %+v", p)
	}

	t.Run("error/duplicate sucursal", func(t *testing.T) {
		_, _, err := w.svc.CreateBranch(ctx, w.a.user, id, branchInput("002"))
		if fe := fieldErrors(t, err); fe["sucursal"] == nil {
			t.Fatalf("errors %v", fe)
		}
		in := branchInput("001")
		_, err = w.svc.UpdateBranch(ctx, w.a.user, id, b2.ID, in)
		if fe := fieldErrors(t, err); fe["sucursal"] == nil {
			t.Fatalf("update to a taken code: %v", fe)
		}
	})
	t.Run("ok/same sucursal in another company", func(t *testing.T) {
		if _, _, err := w.svc.CreateBranch(ctx, w.b.user, w.b.created.ID, branchInput("002")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ok/update is a full replace", func(t *testing.T) {
		in := tenant.BranchInput{Sucursal: "003", VerMonedaExtranjera: "s", Licencia: "L-1"}
		got, err := w.svc.UpdateBranch(ctx, w.a.user, id, b2.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Sucursal != "003" || got.RazonComercial != "" || got.Telefono != "" || !got.VerMonedaExtranjera ||
			got.Licencia != "L-1" || !got.Activo || got.ID != b2.ID || got.CompanyID != id {
			t.Fatalf("after replace %+v", got)
		}
	})

	tests := []struct {
		name   string
		edit   func(in *tenant.BranchInput)
		fields []string
	}{
		{"error/sucursal missing", func(in *tenant.BranchInput) { in.Sucursal = "" }, []string{"sucursal"}},
		{"error/sucursal letters", func(in *tenant.BranchInput) { in.Sucursal = "0a1" }, []string{"sucursal"}},
		{"error/canton not in the catalogue", func(in *tenant.BranchInput) { in.Provincia, in.Canton, in.Distrito = "1", "99", "01" }, []string{"canton"}},
		{"error/NUL in razon comercial", func(in *tenant.BranchInput) { in.RazonComercial = "Sucursal\x00" }, []string{"razonComercial"}},
		{"error/bell in licencia", func(in *tenant.BranchInput) { in.Licencia = "\a" }, []string{"licencia"}},
		{"error/currency not ISO 4217", func(in *tenant.BranchInput) { in.MonedaLocal = "QQQ" }, []string{"monedaLocal"}},
		{"error/sucursal 4 digits", func(in *tenant.BranchInput) { in.Sucursal = "0001" }, []string{"sucursal"}},
		{"error/partial location", func(in *tenant.BranchInput) { in.Canton, in.Distrito = "", "" }, []string{"canton", "distrito"}},
		{"error/bad provincia", func(in *tenant.BranchInput) { in.Provincia = "0" }, []string{"provincia"}},
		{"error/barrio short", func(in *tenant.BranchInput) { in.Barrio = "abc" }, []string{"barrio"}},
		{"error/otras senas long", func(in *tenant.BranchInput) { in.OtrasSenas = string(make([]byte, 251)) }, []string{"otrasSenas"}},
		{"error/razon comercial short", func(in *tenant.BranchInput) { in.RazonComercial = "ab" }, []string{"razonComercial"}},
		{"error/correo", func(in *tenant.BranchInput) { in.CorreoElectronico = "no-at-sign" }, []string{"correoElectronico"}},
		{"error/telefono", func(in *tenant.BranchInput) { in.Telefono = "123" }, []string{"telefono"}},
		{"error/fax", func(in *tenant.BranchInput) { in.Fax = "abc" }, []string{"fax"}},
		{"error/codPais", func(in *tenant.BranchInput) { in.CodPais = "+506" }, []string{"codPais"}},
		{"error/monedas", func(in *tenant.BranchInput) { in.MonedaLocal, in.MonedaExtranjera = "C", "US$" }, []string{"monedaLocal", "monedaExtranjera"}},
		{"error/flags", func(in *tenant.BranchInput) { in.VerMonedaExtranjera, in.Activo = "yes", "1" }, []string{"verMonedaExtranjera", "activo"}},
		{"error/licencia long", func(in *tenant.BranchInput) { in.Licencia = string(make([]byte, 101)) }, []string{"licencia"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := branchInput("009")
			tt.edit(&in)
			_, _, err := w.svc.CreateBranch(ctx, w.a.user, id, in)
			fe := fieldErrors(t, err)
			var got []string
			for f := range fe {
				got = append(got, f)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.fields))
			if !slices.Equal(got, want) {
				t.Fatalf("fields %v, want %v (%v)", got, want, fe)
			}
			_, err = w.svc.UpdateBranch(ctx, w.a.user, id, b2.ID, in)
			if fe := fieldErrors(t, err); len(fe) != len(want) {
				t.Fatalf("update fields %v, want %v", fe, want)
			}
		})
	}
}

func TestCreateAPIUser(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	f := w.a
	cr, err := w.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "caja-2")
	if err != nil {
		t.Fatal(err)
	}
	if cr.Usuario != "caja-2" || cr.Contrasena == "" || cr.APIToken == "" {
		t.Fatalf("credentials %+v", cr)
	}
	p := w.login(t, cr)
	if p.CompanyID != f.created.ID || p.BranchID != f.created.Branch.ID || p.Role != tenant.RoleBranch {
		t.Fatalf("principal %+v", p)
	}
	_, err = w.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "caja-2")
	if fe := fieldErrors(t, err); fe["usuario"] == nil {
		t.Fatalf("taken name: %v", fe)
	}
	// Names are the company's own: another tenant choosing the same name
	// learns nothing, and both users log in as themselves.
	other, err := w.svc.CreateAPIUser(ctx, w.b.user, w.b.created.ID, w.b.created.Branch.ID, "caja-2")
	if err != nil {
		t.Fatalf("another company's user of the same name: %v", err)
	}
	if po := w.login(t, other); po.CompanyID != w.b.created.ID || po.UserID == p.UserID {
		t.Fatalf("the other company's caja-2 logs in as %+v", po)
	}
	// Even the first user's name in its own company is free elsewhere.
	if _, err := w.svc.CreateAPIUser(ctx, w.b.user, w.b.created.ID, w.b.created.Branch.ID, f.creds.Usuario); err != nil {
		t.Fatalf("another company's user named like company A's first user: %v", err)
	}
	_, err = w.svc.CreateAPIUser(ctx, f.user, f.created.ID, f.created.Branch.ID, "")
	if fe := fieldErrors(t, err); fe["usuario"] == nil {
		t.Fatalf("missing name: %v", fe)
	}
	_, err = w.svc.CreateAPIUser(ctx, f.user, f.created.ID, 0, "caja-3")
	if !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("branch 0: %v", err)
	}
}

func TestEnsureAdmin(t *testing.T) {
	b := newBundle(t, bundleOpts{}) // creates the generated admin
	ctx := context.Background()
	if b.adminCr.Usuario != "admin" || len(b.adminCr.Contrasena) < 32 || len(b.adminCr.APIToken) < 43 {
		t.Fatalf("generated admin %+v", b.adminCr.Usuario)
	}
	cr, created, err := b.svc.EnsureAdmin(ctx, "", "", "")
	if err != nil || created || cr != (tenant.Credentials{}) {
		t.Fatalf("second EnsureAdmin = %+v, %v, %v", cr.Usuario, created, err)
	}

	t.Run("ok/configured values", func(t *testing.T) {
		b2 := newBundle(t, bundleOpts{})
		// newBundle made "admin"; a configured name that is absent is
		// created as well (created at first start if absent).
		cr, created, err := b2.svc.EnsureAdmin(ctx, "operator", "a-long-password-1", "0123456789abcdef0123456789abcdef")
		if err != nil || !created {
			t.Fatalf("EnsureAdmin = %v, %v", created, err)
		}
		p := b2.login(t, cr)
		if p.Role != tenant.RoleAdmin || cr.Contrasena != "a-long-password-1" {
			t.Fatalf("principal %+v", p)
		}
		_, created, err = b2.svc.EnsureAdmin(ctx, "operator", "another-password", "another-token-another-token-0123")
		if err != nil || created {
			t.Fatalf("existing admin: %v, %v", created, err)
		}
		b2.login(t, cr) // unchanged
	})
	t.Run("error/weak configured secrets", func(t *testing.T) {
		b2 := newBundle(t, bundleOpts{})
		_, _, err := b2.svc.EnsureAdmin(ctx, "ops", "short", "short")
		fe := fieldErrors(t, err)
		if fe["FACTURAD_ADMIN_PASSWORD"] == nil || fe["FACTURAD_ADMIN_TOKEN"] == nil {
			t.Fatalf("errors %v", fe)
		}
	})
	t.Run("error/name of a non-admin user", func(t *testing.T) {
		b2 := newBundle(t, bundleOpts{})
		b2.newReseller(t, "taken-name")
		_, created, err := b2.svc.EnsureAdmin(ctx, "taken-name", "", "")
		if err == nil || created {
			t.Fatalf("EnsureAdmin on a reseller's name = %v, %v", created, err)
		}
	})
}

// TestCompanySecretsByRole: Company opens the tax-authority password and
// the certificate PIN for those who manage the company (an admin, its
// reseller) and for nobody while HideCompanySecrets is set; every other
// principal that may see the company reads it without them, and the
// others get ErrNotFound. Update answers carry no secret for anyone
// (UpdateCompany returns the company sealed); create answers have no
// field for them.
func TestCompanySecretsByRole(t *testing.T) {
	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("hide=%v", hide), func(t *testing.T) {
			w := newWorldWith(t, bundleOpts{hideSecrets: hide})
			ctx := context.Background()
			// A second branch of A and its user.
			_, cr, err := w.svc.CreateBranch(ctx, w.a.user, w.a.created.ID, branchInput("002"))
			if err != nil {
				t.Fatal(err)
			}
			w.principals["userA2"] = w.login(t, cr)
			reads := map[string]map[string]bool{ // who: company -> gets the secrets
				"admin": {"A": true, "B": true, "C": true},
				"r1":    {"A": true},
				"r2":    {"B": true},
				"userA": {"A": false}, "userA2": {"A": false},
				"userB": {"B": false},
				"userC": {"C": false},
			}
			companies := map[string]tenantFixture{"A": w.a, "B": w.b, "C": w.c}
			for who, p := range w.principals {
				for name, f := range companies {
					t.Run(who+" on "+name, func(t *testing.T) {
						shows, sees := reads[who][name]
						d, err := w.svc.Company(ctx, p, f.created.ID)
						if !sees {
							if !errors.Is(err, tenant.ErrNotFound) {
								t.Fatalf("err = %v, want ErrNotFound", err)
							}
							return
						}
						if err != nil {
							t.Fatal(err)
						}
						want := shows && !hide
						got := string(d.ContrasenaHacienda) == "s3cr3t$/@);]+|" && string(d.CertificatePIN) == "1234"
						if got != want || d.SecretsShown != want {
							t.Fatalf("secrets shown %v (%v), want %v", got, d.SecretsShown, want)
						}
						if !want && (len(d.ContrasenaHacienda) != 0 || len(d.CertificatePIN) != 0) {
							t.Fatal("withheld secrets are not empty")
						}
						if d.UsuarioHacienda == "" || d.ID != f.created.ID {
							t.Fatalf("the rest of the company is missing: %+v", d.Company)
						}
					})
				}
			}
		})
	}
}
