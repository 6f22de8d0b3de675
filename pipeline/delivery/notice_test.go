package delivery_test

import (
	"context"
	"encoding/json"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/pipeline/delivery/smtptest"
	"facturad/tenant"
)

// recordEvent records a tenant event of the company with its data, as
// the service does, through the store.
func recordEvent(t *testing.T, s store, name string, data api.TenantEventData, email []string, occasion string) tenant.TenantEvent {
	t.Helper()
	ev := tenant.TenantEvent{
		CompanyID: data.CompaniaID, Name: name, ID: tenant.NewEventID(), Created: time.Now(),
		Occasions: []string{occasion}, Email: email,
		Payload: func([]string) ([]byte, error) { return json.Marshal(data) },
	}
	got, err := s.(tenant.TenantEventStore).RecordTenantEvent(context.Background(), ev)
	if err != nil || len(got) != 1 {
		t.Fatalf("RecordTenantEvent = %v, %v", got, err)
	}
	return ev
}

// A tenant event reaches a real HTTP endpoint as A.12's body, signed, with
// the company as its data, and a real SMTP server as a notice to the
// company's addresses that says what happened.
func TestTenantEventDelivered(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		c, _ := f.company(t, "Avisos S.A.")
		r := newReceiver(t, nil)
		_, secret := f.webhook(t, c.ID, r.srv.URL+"/hooks", tenant.EventCertificateExpiring, "documento.aceptado")
		r.secret = secret
		st := smtptest.New(t)
		data := api.TenantEventData{CompaniaID: c.ID, NumeroIdentificacion: c.NumeroIdentificacion, RazonSocial: c.RazonSocial,
			Ambiente: "produccion", ExpiracionCertificado: "2026-12-10T08:00:00"}
		ev := recordEvent(t, s, tenant.EventCertificateExpiring, data, []string{"avisos@example.com", "conta@example.com"}, "30d:x")
		f.deliverer(t, nil)
		f.mailer(t, smtpConfig(t, st), nil)

		got := r.wait(t, 1)[0]
		if got.ID != ev.ID || got.Evento != tenant.EventCertificateExpiring || got.Creado != api.LocalTime(ev.Created) {
			t.Errorf("webhook body %+v, want event %s", got, ev.ID)
		}
		var d api.TenantEventData
		if err := json.Unmarshal(got.Data, &d); err != nil || !reflectEqual(d, data) {
			t.Errorf("data %s, want %+v", got.Data, data)
		}
		// Its fields: the company, and what the event is about.
		var fields map[string]any
		if err := json.Unmarshal(got.Data, &fields); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"companiaId", "numeroIdentificacion", "razonSocial", "ambiente", "expiracionCertificado"} {
			if _, ok := fields[k]; !ok {
				t.Errorf("data has no %s: %s", k, got.Data)
			}
		}
		if _, ok := fields["claves"]; ok {
			t.Errorf("a certificate's data names claves: %s", got.Data)
		}

		waitFor(t, func() bool { return len(st.Received()) == 1 })
		msg := st.Received()[0]
		if !slices.Equal(msg.To, []string{"avisos@example.com", "conta@example.com"}) {
			t.Errorf("sent to %v", msg.To)
		}
		subject, text := readNotice(t, msg.Data)
		if !strings.Contains(subject, "Avisos S.A.") || !strings.Contains(subject, "2026-12-10 08:00:00") {
			t.Errorf("subject %q", subject)
		}
		for _, want := range []string{c.NumeroIdentificacion, "produccion", "Evento: certificado.por_vencer", "Id: " + ev.ID} {
			if !strings.Contains(text, want) {
				t.Errorf("the notice does not say %q:\n%s", want, text)
			}
		}
		waitFor(t, func() bool {
			pending, _, err := s.EmailBacklog(context.Background())
			return err == nil && pending == 0
		})
	})
}

// Each tenant event's notice says what the company must do; a stuck
// documents' notice lists the claves it names and counts the others.
func TestNoticeTexts(t *testing.T) {
	st := smtptest.New(t)
	s := newSQLite(t)
	f := newFixture(t, s)
	c, _ := f.company(t, "Textos S.A.")
	base := api.TenantEventData{CompaniaID: c.ID, NumeroIdentificacion: c.NumeroIdentificacion, RazonSocial: c.RazonSocial, Ambiente: "pruebas"}
	cases := []struct {
		name    string
		set     func(d *api.TenantEventData)
		subject string
		says    []string
	}{
		{tenant.EventCertificateExpired, func(d *api.TenantEventData) { d.ExpiracionCertificado = "2026-12-01T00:00:00" },
			"venció", []string{"venció el 2026-12-01 00:00:00", "mismo id_externo"}},
		{tenant.EventCredentialsRefused, nil, "rechazó las credenciales", []string{"ContrasenaHacienda", "estado 05"}},
		{tenant.EventDocumentsStuck, func(d *api.TenantEventData) {
			d.Claves, d.Cantidad = []string{"50601", "50602"}, 5
		}, "5 comprobantes", []string{"  50601\r\n  50602", "… y 3 más."}},
	}
	for i, tt := range cases {
		d := base
		if tt.set != nil {
			tt.set(&d)
		}
		recordEvent(t, s, tt.name, d, []string{"avisos@example.com"}, string(rune('a'+i)))
	}
	f.mailer(t, smtpConfig(t, st), nil)
	waitFor(t, func() bool { return len(st.Received()) == len(cases) })
	for _, tt := range cases {
		found := false
		for _, m := range st.Received() {
			subject, text := readNotice(t, m.Data)
			if !strings.Contains(text, "Evento: "+tt.name) {
				continue
			}
			found = true
			if !strings.Contains(subject, tt.subject) {
				t.Errorf("%s: subject %q, want it to say %q", tt.name, subject, tt.subject)
			}
			for _, w := range tt.says {
				if !strings.Contains(text, w) {
					t.Errorf("%s: the text does not say %q:\n%s", tt.name, w, text)
				}
			}
		}
		if !found {
			t.Errorf("no notice of %s", tt.name)
		}
	}
}

// A notice whose data cannot be read fails for good, once.
func TestNoticeUnreadableFails(t *testing.T) {
	st := smtptest.New(t)
	s := newSQLite(t)
	f := newFixture(t, s)
	c, _ := f.company(t, "Ilegible S.A.")
	ev := tenant.TenantEvent{CompanyID: c.ID, Name: tenant.EventCertificateExpired, ID: tenant.NewEventID(), Created: time.Now(),
		Occasions: []string{"x"}, Email: []string{"avisos@example.com"},
		Payload: func([]string) ([]byte, error) { return []byte(`"not an object"`), nil }}
	if _, err := s.(tenant.TenantEventStore).RecordTenantEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	f.mailer(t, smtpConfig(t, st), nil)
	waitFor(t, func() bool {
		pending, _, err := s.EmailBacklog(context.Background())
		return err == nil && pending == 0
	})
	if n := len(st.Received()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}

func reflectEqual(a, b api.TenantEventData) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// readNotice reads a notice's subject and text back.
func readNotice(t *testing.T, raw []byte) (subject, text string) {
	t.Helper()
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	parts := parseParts(t, m)
	if len(parts) != 1 {
		t.Fatalf("a notice of %d parts, want its text alone", len(parts))
	}
	return subject, string(parts[""])
}
