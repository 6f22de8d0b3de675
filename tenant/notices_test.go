package tenant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// noticeStore is the test store seen as everything the events touch.
type noticeStore interface {
	storetest.TenantEventStore
}

// noticeBundle is a service with notice e-mail on, over a fresh SQLite
// store, whose clock the test moves.
func noticeBundle(t *testing.T) (*bundle, noticeStore, *time.Time) {
	t.Helper()
	s := storetest.NewSQLiteStore(t)
	b := newBundle(t, bundleOpts{store: s})
	now := b.now
	b.opts.NoticeEmail = true
	b.opts.Now = func() time.Time { return now }
	svc, err := tenant.NewService(b.opts)
	if err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	return b, s, &now
}

// withCertificate is a company input whose certificate expires at
// notAfter, and whose notices go to correo.
func withCertificate(t *testing.T, ident string, notAfter time.Time, correo string) tenant.CompanyInput {
	t.Helper()
	in := companyInput(t, ident)
	m := mint(t, certmint.Options{TipoIdentificacion: "02", Identificacion: ident, NotAfter: notAfter})
	in.Certificate, in.CertificatePIN = tenant.Secret(m.P12), tenant.Secret(m.PIN)
	in.CorreoNotificaciones = &correo
	return in
}

// claimNotices claims every notice e-mail due by the far future.
func claimNotices(t *testing.T, s noticeStore) []tenant.EmailDelivery {
	t.Helper()
	far := time.Now().Add(365 * 24 * time.Hour)
	es, err := s.ClaimDueEmails(context.Background(), far, far.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func eventData(t *testing.T, payload []byte) api.TenantEventData {
	t.Helper()
	var d api.TenantEventData
	if err := json.Unmarshal(payload, &d); err != nil {
		t.Fatalf("event data %s: %v", payload, err)
	}
	return d
}

// A certificate stored with 10 days left is announced at once
// (certificado.por_vencer, 30-day stage); the hourly check announces the
// 7-day stage and the expiry once each, whoever checks how often; a new
// certificate far from its expiry is not announced; every notice goes to
// the company's notice addresses with the company and the expiry.
func TestCertificateEvents(t *testing.T) {
	ctx := context.Background()
	b, s, now := noticeBundle(t)
	expiry := b.now.Add(10 * 24 * time.Hour).Truncate(time.Second)
	cc, err := b.svc.CreateCompany(ctx, b.admin, withCertificate(t, "3101444555", expiry, "aviso@nandu.example;conta@nandu.example"))
	if err != nil {
		t.Fatal(err)
	}
	id := cc.Company.ID
	mails := claimNotices(t, s)
	if len(mails) != 1 {
		t.Fatalf("%d notices after storing a certificate with 10 days left, want 1", len(mails))
	}
	m := mails[0]
	d := eventData(t, m.Payload)
	if m.Evento != tenant.EventCertificateExpiring || m.CompanyID != id || m.DocumentID != 0 ||
		!slices.Equal(m.Recipients, []string{"aviso@nandu.example", "conta@nandu.example"}) {
		t.Errorf("notice %+v", m)
	}
	want := api.TenantEventData{CompaniaID: id, NumeroIdentificacion: "3101444555", RazonSocial: cc.Company.RazonSocial,
		Ambiente: cc.Company.Ambiente, ExpiracionCertificado: api.LocalTime(expiry)}
	if fmt.Sprint(d) != fmt.Sprint(want) || d.Ambiente == "" {
		t.Errorf("data %+v, want %+v", d, want)
	}
	// A webhook registered now gets what comes next.
	hook := tenant.Webhook{CompanyID: id, URL: "https://hooks.example/t", Eventos: tenant.TenantEventNames(), SealedSecret: []byte("s")}
	if err := s.CreateWebhook(ctx, &hook, 10); err != nil {
		t.Fatal(err)
	}
	sweep := func(at time.Time) int {
		t.Helper()
		*now = at
		n, err := b.svc.SweepCertificates(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deliveries := func() []tenant.Delivery {
		t.Helper()
		ds, err := s.Deliveries(ctx, hook.ID, tenant.DeliveryPage{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	// Start-up and hourly checks while 10 to 8 days are left: nothing new.
	for _, at := range []time.Time{b.now, b.now.Add(time.Hour), b.now.Add(48 * time.Hour)} {
		if n := sweep(at); n != 0 {
			t.Errorf("check at %s announced %d", at, n)
		}
	}
	// 7 days left: the second notice, once, however often checked.
	if n := sweep(expiry.Add(-7 * 24 * time.Hour)); n != 1 {
		t.Errorf("check at 7 days left announced %d, want 1", n)
	}
	for range 3 {
		if n := sweep(expiry.Add(-6 * 24 * time.Hour)); n != 0 {
			t.Errorf("a repeated check announced %d", n)
		}
	}
	// Expired: certificado.vencido, once.
	if n := sweep(expiry); n != 1 {
		t.Errorf("check at the expiry announced %d, want 1", n)
	}
	if n := sweep(expiry.Add(30 * 24 * time.Hour)); n != 0 {
		t.Errorf("a check a month after the expiry announced %d", n)
	}
	ds := deliveries()
	if len(ds) != 2 || ds[1].Evento != tenant.EventCertificateExpiring || ds[0].Evento != tenant.EventCertificateExpired {
		t.Fatalf("deliveries %+v, want the 7-day notice and the expiry", ds)
	}
	for _, dl := range ds {
		if got := eventData(t, dl.Payload); got.ExpiracionCertificado != api.LocalTime(expiry) || got.CompaniaID != id {
			t.Errorf("%s data %+v", dl.Evento, got)
		}
	}
	if n := len(claimNotices(t, s)); n != 2 {
		t.Errorf("%d notices mailed by the checks, want 2", n)
	}

	// A new certificate a year away: nothing; one with 5 days left: the
	// 7-day notice at once, and no 30-day one after it.
	renewed := withCertificate(t, "3101444555", expiry.Add(365*24*time.Hour), "aviso@nandu.example")
	if _, err := b.svc.UpdateCompany(ctx, b.admin, id, renewed); err != nil {
		t.Fatal(err)
	}
	if n := len(deliveries()); n != 2 {
		t.Errorf("%d deliveries after a renewal far from its expiry, want 2", n)
	}
	soon := (*now).Add(5 * 24 * time.Hour).Truncate(time.Second)
	if _, err := b.svc.UpdateCompany(ctx, b.admin, id, withCertificate(t, "3101444555", soon, "aviso@nandu.example")); err != nil {
		t.Fatal(err)
	}
	if ds := deliveries(); len(ds) != 3 || ds[0].Evento != tenant.EventCertificateExpiring || eventData(t, ds[0].Payload).ExpiracionCertificado != api.LocalTime(soon) {
		t.Fatalf("deliveries after storing one with 5 days left: %+v", ds)
	}
	if n := sweep(*now); n != 0 {
		t.Errorf("a check after it announced %d", n)
	}
}

// With e-mail off (no SMTP server), events reach the webhooks only.
func TestTenantEventsWithoutEmail(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewSQLiteStore(t)
	b := newBundle(t, bundleOpts{store: s})
	in := withCertificate(t, "3101444556", b.now.Add(3*24*time.Hour), "aviso@nandu.example")
	if _, err := b.svc.CreateCompany(ctx, b.admin, in); err != nil {
		t.Fatal(err)
	}
	if n := len(claimNotices(t, s)); n != 0 {
		t.Errorf("%d notice e-mails written with e-mail off", n)
	}
	// The occasion is recorded all the same: turning e-mail on later does
	// not send it.
	n, err := b.svc.SweepCertificates(ctx, b.now)
	if err != nil || n != 0 {
		t.Errorf("SweepCertificates = %d, %v", n, err)
	}
}

// Documents unsettled an hour after they were numbered are announced once,
// one event per company per sweep, listing at most 100 claves and counting
// them all; the next sweep announces only those stuck since.
func TestStuckDocumentEvents(t *testing.T) {
	ctx := context.Background()
	b, s, _ := noticeBundle(t)
	newCompany := func(ident string) tenantFixture {
		in := companyInput(t, ident)
		correo := "avisos@" + ident + ".example"
		in.CorreoNotificaciones = &correo
		cc, err := b.svc.CreateCompany(ctx, b.admin, in)
		if err != nil {
			t.Fatal(err)
		}
		return tenantFixture{created: cc}
	}
	a, c := newCompany("3101000301"), newCompany("3101000302")
	reserve := func(f tenantFixture, n int, st tenant.State) []string {
		t.Helper()
		var out []string
		for i := range n {
			d := tenant.Document{CompanyID: f.created.Company.ID, BranchID: f.created.Branch.ID, IDExterno: fmt.Sprintf("%s-%d", st, i),
				Tipo: "01", Terminal: "00001", Situacion: "1", Submission: tenant.Submission{Phase: tenant.PhaseNumbered, Estado: tenant.StatePending}}
			if err := s.ReserveDocument(ctx, &d); err != nil {
				t.Fatal(err)
			}
			d.Clave = fmt.Sprintf("506%047d", d.ID)
			d.Place(st)
			if err := s.SaveDocument(ctx, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d.Clave)
		}
		return out
	}
	stuckA := reserve(a, 105, tenant.StateNotSentYet)
	stuckC := append(reserve(c, 2, tenant.StatePending), reserve(c, 1, tenant.StateSent)...)
	reserve(c, 3, tenant.StateAccepted) // settled: never stuck

	// Within the hour nothing is stuck.
	if n, err := b.svc.SweepStuckDocuments(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("sweep within the hour = %d, %v", n, err)
	}
	later := time.Now().Add(tenant.StuckAfter + time.Minute)
	n, err := b.svc.SweepStuckDocuments(ctx, later)
	if err != nil || n != 2 {
		t.Fatalf("sweep = %d, %v; want an event for each company", n, err)
	}
	byCompany := map[int64]api.TenantEventData{}
	for _, m := range claimNotices(t, s) {
		if m.Evento != tenant.EventDocumentsStuck {
			continue
		}
		d := eventData(t, m.Payload)
		byCompany[d.CompaniaID] = d
	}
	da, dc := byCompany[a.created.Company.ID], byCompany[c.created.Company.ID]
	if !slices.Equal(da.Claves, stuckA[:api.MaxTenantEventClaves]) || da.Cantidad != 105 || da.NumeroIdentificacion != "3101000301" {
		t.Errorf("company a: %d claves, cantidad %d; want the oldest 100 of 105", len(da.Claves), da.Cantidad)
	}
	if !slices.Equal(dc.Claves, stuckC) || dc.Cantidad != 3 {
		t.Errorf("company c: %v (%d), want %v", dc.Claves, dc.Cantidad, stuckC)
	}
	// Again: nothing; one more stuck later: only it.
	if n, err := b.svc.SweepStuckDocuments(ctx, later); err != nil || n != 0 {
		t.Errorf("a second sweep = %d, %v", n, err)
	}
	more := reserve(c, 1, tenant.StateNotSentYet)
	n, err = b.svc.SweepStuckDocuments(ctx, time.Now().Add(tenant.StuckAfter+time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("sweep after one more = %d, %v", n, err)
	}
	ms := claimNotices(t, s)
	if len(ms) != 1 || !slices.Equal(eventData(t, ms[0].Payload).Claves, more) {
		t.Errorf("notices %+v, want one naming %v", ms, more)
	}
}

// The operators' lists: an admin sees every company, a reseller its own,
// anyone else nothing (not found, as for a route that is not theirs).
func TestOperatorLists(t *testing.T) {
	ctx := context.Background()
	b, _, _ := noticeBundle(t)
	r1, _ := b.newReseller(t, "revendedor")
	expiry := b.now.Add(20 * 24 * time.Hour).Truncate(time.Second)
	mine, err := b.svc.CreateCompany(ctx, r1, withCertificate(t, "3101000401", expiry, ""))
	if err != nil {
		t.Fatal(err)
	}
	theirs := b.newCompany(t, b.admin, "3101000402") // expires in years
	before := b.now.Add(30 * 24 * time.Hour)
	ids := func(p tenant.Principal, before time.Time) ([]int64, error) {
		cs, err := b.svc.ExpiringCertificates(ctx, p, before, nil, 100)
		var out []int64
		for _, c := range cs {
			out = append(out, c.CompanyID)
		}
		return out, err
	}
	if got, err := ids(b.admin, before); err != nil || !slices.Equal(got, []int64{mine.Company.ID}) {
		t.Errorf("admin: %v, %v", got, err)
	}
	if got, err := ids(b.admin, expiry.Add(20*365*24*time.Hour)); err != nil || len(got) != 2 {
		t.Errorf("admin, far date: %v, %v", got, err)
	}
	if got, err := ids(r1, expiry.Add(20*365*24*time.Hour)); err != nil || !slices.Equal(got, []int64{mine.Company.ID}) {
		t.Errorf("reseller: %v, %v", got, err)
	}
	for _, p := range []tenant.Principal{theirs.user, {Role: tenant.RoleReseller}, {}} {
		if _, err := ids(p, before); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%+v listed certificates: %v", p, err)
		}
		if _, err := b.svc.StuckDocuments(ctx, p, nil, 10); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("%+v listed stuck documents: %v", p, err)
		}
	}
	for _, p := range []tenant.Principal{b.admin, r1} {
		if ds, err := b.svc.StuckDocuments(ctx, p, nil, 10); err != nil || len(ds) != 0 {
			t.Errorf("stuck documents: %v, %v", ds, err)
		}
	}
}

// Costa Rica midnight is 06:00 UTC.
func TestCostaRicaMidnight(t *testing.T) {
	got := tenant.CostaRicaMidnight(2026, 12, 1)
	if want := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("CostaRicaMidnight = %s, want %s", got.UTC(), want)
	}
}

// The stages of a certificate's expiry.
func TestCertificateOccasion(t *testing.T) {
	expiry := time.Date(2027, 1, 10, 15, 4, 5, 0, time.UTC)
	day := 24 * time.Hour
	for _, tt := range []struct {
		left      time.Duration
		name, occ string
	}{
		{31 * day, "", ""},
		{30*day + time.Second, "", ""},
		{30 * day, tenant.EventCertificateExpiring, "30d:2027-01-10T15:04:05Z"},
		{10 * day, tenant.EventCertificateExpiring, "30d:2027-01-10T15:04:05Z"},
		{7*day + time.Second, tenant.EventCertificateExpiring, "30d:2027-01-10T15:04:05Z"},
		{7 * day, tenant.EventCertificateExpiring, "7d:2027-01-10T15:04:05Z"},
		{time.Second, tenant.EventCertificateExpiring, "7d:2027-01-10T15:04:05Z"},
		{0, tenant.EventCertificateExpired, "2027-01-10T15:04:05Z"},
		{-400 * day, tenant.EventCertificateExpired, "2027-01-10T15:04:05Z"},
	} {
		name, occ := tenant.CertificateOccasion(expiry, expiry.Add(-tt.left))
		if name != tt.name || occ != tt.occ {
			t.Errorf("%s left: %q %q, want %q %q", tt.left, name, occ, tt.name, tt.occ)
		}
	}
	if name, _ := tenant.CertificateOccasion(time.Time{}, expiry); name != "" {
		t.Errorf("no certificate: %q", name)
	}
}
