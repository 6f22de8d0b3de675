package delivery_test

import (
	"context"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"facturad/pipeline/delivery"
	"facturad/pipeline/delivery/smtptest"
	"facturad/tenant"
)

// TestSMTPInternationalAddresses: addresses outside ASCII (RFC 6531) on a
// real SMTP server, with and without SMTPUTF8 advertised. With it, MAIL
// FROM says SMTPUTF8 and every address goes as written. Without it,
// nothing goes raw: a domain goes in its IDNA ASCII form (punycode), in
// the envelope and the headers alike; an address whose part before @ is
// not ASCII, or whose domain IDNA refuses, is that recipient's refusal
// with the reason, and the others get the message.
func TestSMTPInternationalAddresses(t *testing.T) {
	to := []string{"compras@example.com", "josé@ñandú.cr", "ventas@ñandú.cr", "conta@bad_dómain.cr"}
	for _, tt := range []struct {
		name         string
		utf8         bool
		from         string
		envelopeTo   []string
		rejected     map[string]string // address: a word of the reason
		headerWords  []string          // in the To and From headers
		headerAbsent []string
	}{
		{
			name: "ok/with SMTPUTF8 every address as written", utf8: true,
			from: "facturas@ñandú.cr", envelopeTo: to, rejected: map[string]string{},
			headerWords: []string{"josé@ñandú.cr", "ventas@ñandú.cr", "facturas@ñandú.cr"},
		},
		{
			name: "ok/without SMTPUTF8 domains in punycode, non-ASCII mailboxes refused", utf8: false,
			from:       "facturas@xn--and-6ma2c.cr",
			envelopeTo: []string{"compras@example.com", "ventas@xn--and-6ma2c.cr"},
			rejected: map[string]string{
				"josé@ñandú.cr":       "SMTPUTF8",
				"conta@bad_dómain.cr": "IDNA",
			},
			headerWords:  []string{"compras@example.com", "ventas@xn--and-6ma2c.cr", "facturas@xn--and-6ma2c.cr"},
			headerAbsent: []string{"josé", "ñandú", "dómain"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := smtptest.New(t, smtptest.Options{SMTPUTF8: tt.utf8})
			cfg := smtpConfig(t, st)
			cfg.From = (&mail.Address{Name: "Facturación", Address: "facturas@ñandú.cr"}).String()
			res, err := cfg.Send(context.Background(), delivery.Message{To: to, Subject: "Comprobante", Text: "texto", MessageID: "x@facturad"})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := map[string]string{}
			for _, r := range res.Rejected {
				got[r.Address] = r.Message
				if r.Code != 0 {
					t.Errorf("%s: code %d, want 0 (no server said it)", r.Address, r.Code)
				}
			}
			if len(got) != len(tt.rejected) {
				t.Errorf("rejected %v, want %v", got, tt.rejected)
			}
			for addr, word := range tt.rejected {
				if !strings.Contains(got[addr], word) {
					t.Errorf("%s: reason %q, want one naming %s", addr, got[addr], word)
				}
			}
			msgs := st.Received()
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			m := msgs[0]
			if m.UTF8 != tt.utf8 || m.From != tt.from || !slices.Equal(m.To, tt.envelopeTo) {
				t.Fatalf("envelope SMTPUTF8 %v from %s to %v; want %v, %s, %v", m.UTF8, m.From, m.To, tt.utf8, tt.from, tt.envelopeTo)
			}
			head, _, _ := strings.Cut(string(m.Data), "\r\n\r\n")
			for _, w := range tt.headerWords {
				if !strings.Contains(head, w) {
					t.Errorf("headers lack %q:\n%s", w, head)
				}
			}
			for _, w := range tt.headerAbsent {
				if strings.Contains(head, w) {
					t.Errorf("headers hold %q for a server without SMTPUTF8:\n%s", w, head)
				}
			}
			if !tt.utf8 {
				for i, r := range string(m.Data) {
					if r >= utf8.RuneSelf {
						t.Fatalf("the message holds %q at byte %d for a server without SMTPUTF8", r, i)
					}
				}
			}
		})
	}
}

// TestEmailInternationalRecipients: a document's e-mail to an address
// outside ASCII, through the mailer and the store. Without SMTPUTF8 the
// other recipient gets it, the e-mail is delivered and the address's
// refusal is recorded with its reason; with SMTPUTF8 both get it.
func TestEmailInternationalRecipients(t *testing.T) {
	for _, utf8OK := range []bool{false, true} {
		// A store of its own for each server: a mailer of one would take
		// the other's e-mails.
		t.Run(map[bool]string{false: "without SMTPUTF8", true: "with SMTPUTF8"}[utf8OK], func(t *testing.T) {
			eachStore(t, func(t *testing.T, s store) { checkInternationalRecipients(t, s, utf8OK) })
		})
	}
}

func checkInternationalRecipients(t *testing.T, s store, utf8OK bool) {
	f := newFixture(t, s)
	_, b := f.company(t, "Ñandú S.A.")
	st := smtptest.New(t, smtptest.Options{SMTPUTF8: utf8OK})
	d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com", "josé@ñandú.cr"})
	f.mailer(t, smtpConfig(t, st), fixedPDF{})
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return len(es) == 1 && es[0].State() == tenant.DeliveryDelivered
	})
	e := f.emails(t, d)[0]
	msgs := st.Received()
	if len(msgs) != 1 {
		t.Fatalf("SMTPUTF8 %v: %d messages, want 1", utf8OK, len(msgs))
	}
	if utf8OK {
		if len(e.Rejected) != 0 || !slices.Equal(msgs[0].To, []string{"compras@example.com", "josé@ñandú.cr"}) {
			t.Errorf("with SMTPUTF8: rejected %+v, envelope to %v", e.Rejected, msgs[0].To)
		}
		return
	}
	if !slices.Equal(msgs[0].To, []string{"compras@example.com"}) {
		t.Errorf("without SMTPUTF8: envelope to %v, want only the ASCII address", msgs[0].To)
	}
	if len(e.Rejected) != 1 || e.Rejected[0].Address != "josé@ñandú.cr" || !strings.Contains(e.Rejected[0].Message, "SMTPUTF8") {
		t.Errorf("without SMTPUTF8: rejected %+v, want josé@ñandú.cr with its reason", e.Rejected)
	}
}
