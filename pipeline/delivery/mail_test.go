package delivery_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/hacienda/sample"
	"facturad/pipeline/delivery"
	"facturad/pipeline/delivery/smtptest"
	"facturad/tenant"
	"facturad/tenant/printed"
	"facturad/tenant/storetest"
)

func smtpConfig(t *testing.T, st *smtptest.Server) delivery.SMTP {
	t.Helper()
	host, port, _ := net.SplitHostPort(st.Addr)
	s, err := delivery.ParseSMTPURL("smtp://"+st.User+":"+st.Pass+"@"+net.JoinHostPort(host, port), "Facturación <facturas@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	s.TLS = &tls.Config{RootCAs: st.Roots}
	return s
}

// fixedPDF is a PDF renderer returning known bytes, so that the
// attachment can be compared byte for byte. It refuses a call without
// the document the mailer read for the text: the signed XML is read once
// an e-mail.
type fixedPDF struct{}

func (fixedPDF) DocumentPDF(_ context.Context, d tenant.Document, x *hacienda.Document) ([]byte, error) {
	if x == nil || x.Clave != d.Clave {
		return nil, fmt.Errorf("document %s: the mailer did not pass the signed XML it read", d.Clave)
	}
	return []byte("%PDF-1.4\n% " + d.Clave + "\n%%EOF\n"), nil
}

func (f *fixture) mailer(t *testing.T, sender delivery.Sender, pdf delivery.PDFRenderer) {
	t.Helper()
	f.mailerWith(t, sender, pdf, nil)
}

// mailerWith starts a mailer with fast retries, changed by mod.
func (f *fixture) mailerWith(t *testing.T, sender delivery.Sender, pdf delivery.PDFRenderer, mod func(*delivery.MailerOptions)) {
	t.Helper()
	o := delivery.MailerOptions{
		Store: f.s, Sender: sender, PDF: pdf, PollInterval: 10 * time.Millisecond,
		BackoffBase: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond, Logger: quiet, Registerer: f.reg,
	}
	if mod != nil {
		mod(&o)
	}
	m, err := delivery.NewMailer(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Stop(ctx); err != nil {
			t.Errorf("stop mailer: %v", err)
		}
	})
}

func (f *fixture) emails(t *testing.T, d tenant.Document) []tenant.EmailDelivery {
	t.Helper()
	es, err := f.s.DocumentEmails(context.Background(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// The e-mail of an accepted document reaches a real SMTP server over
// STARTTLS with AUTH, with its three attachments, which parse back equal
// to what is stored; a recipient the server refuses is recorded on the
// document and the others get the message.
func TestEmailDelivered(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		_, b := f.company(t, "Correo S.A.")
		st := smtptest.New(t)
		st.Refuse["nadie@example.com"] = true
		d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com", "nadie@example.com", "conta@example.com"})
		f.mailer(t, smtpConfig(t, st), fixedPDF{})
		waitFor(t, func() bool {
			es := f.emails(t, d)
			return len(es) == 1 && es[0].State() == tenant.DeliveryDelivered
		})
		e := f.emails(t, d)[0]
		if len(e.Rejected) != 1 || e.Rejected[0].Address != "nadie@example.com" || e.Rejected[0].Code != 550 ||
			!strings.Contains(e.Rejected[0].Message, "no such mailbox") || e.Attempts != 1 {
			t.Fatalf("e-mail %+v", e)
		}
		st.Mu.Lock()
		defer st.Mu.Unlock()
		if len(st.Messages) != 1 || !st.TLS[0] || !st.Authed[0] {
			t.Fatalf("%d messages, tls %v, authenticated %v", len(st.Messages), st.TLS, st.Authed)
		}
		msg := st.Messages[0]
		if msg.From != "facturas@example.com" || !slices.Equal(msg.To, []string{"compras@example.com", "conta@example.com"}) {
			t.Fatalf("envelope from %s to %v", msg.From, msg.To)
		}
		parts := parseMessage(t, msg.Data)
		want := map[string][]byte{
			d.Clave + ".xml":           d.SignedXML,
			d.Clave + "-respuesta.xml": d.ResponseXML,
			d.Clave + ".pdf":           []byte("%PDF-1.4\n% " + d.Clave + "\n%%EOF\n"),
		}
		for name, data := range want {
			if !bytes.Equal(parts[name], data) {
				t.Errorf("attachment %s: %q, want %q", name, parts[name], data)
			}
		}
		if len(parts) != 4 || !strings.Contains(string(parts[""]), d.Consecutivo) {
			t.Errorf("parts %v", keys(parts))
		}
	})
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// parseMessage reads a MIME message back: each attachment by file name,
// the text under "".
func parseMessage(t *testing.T, raw []byte) map[string][]byte {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(m.Header.Get("Subject"))
	if err != nil || !strings.HasPrefix(subject, "[PRUEBAS] Factura Electrónica ") && !strings.HasPrefix(subject, "Factura Electrónica ") {
		t.Fatalf("subject %q: %v", subject, err)
	}
	return parseParts(t, m)
}

// parseParts reads a multipart/mixed message's parts: each attachment by
// file name, the text under "".
func parseParts(t *testing.T, m *mail.Message) map[string][]byte {
	t.Helper()
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("content type %q: %v", m.Header.Get("Content-Type"), err)
	}
	out := map[string][]byte{}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.Get("Content-Transfer-Encoding") != "base64" {
			t.Fatalf("part %q not in base64", p.FileName())
		}
		data, err := io.ReadAll(newBase64Reader(p))
		if err != nil {
			t.Fatal(err)
		}
		out[p.FileName()] = data
	}
	return out
}

// Refused for good (554 at DATA): the e-mail fails at once and the
// document says so; a 451 is tried again.
func TestEmailPermanentFailure(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		_, b := f.company(t, "Rechazo S.A.")
		st := smtptest.New(t)
		st.Set(&st.FailData, 554)
		d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"})
		f.mailer(t, smtpConfig(t, st), nil)
		waitFor(t, func() bool {
			es := f.emails(t, d)
			return len(es) == 1 && es[0].State() == tenant.DeliveryFailed
		})
		e := f.emails(t, d)[0]
		if e.Attempts != 1 || !strings.Contains(e.LastError, "554") || !e.NextAttemptAt.IsZero() {
			t.Fatalf("e-mail %+v", e)
		}
	})
}

func TestEmailTemporaryFailureRetried(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Reintento S.A.")
	st := smtptest.New(t)
	st.Set(&st.FailData, 451)
	d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"})
	f.mailer(t, smtpConfig(t, st), nil)
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return len(es) == 1 && es[0].Attempts >= 2
	})
	st.Set(&st.FailData, 0)
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return es[0].State() == tenant.DeliveryDelivered
	})
	st.Mu.Lock()
	defer st.Mu.Unlock()
	if len(st.Messages) != 1 {
		t.Fatalf("%d messages", len(st.Messages))
	}
	parts := parseMessage(t, st.Messages[0].Data)
	if len(parts) != 3 || parts[d.Clave+".pdf"] != nil {
		t.Fatalf("without a PDF renderer: parts %v", keys(parts))
	}
}

// The SMTP password never appears in what the service shows of its
// configuration, nor in a failed session's error.
func TestSMTPPasswordNotShown(t *testing.T) {
	s, err := delivery.ParseSMTPURL("smtp://user:hunter2-pass@127.0.0.1:1", "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = 2 * time.Second
	_, err = s.Send(context.Background(), delivery.Message{To: []string{"b@example.com"}})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(s.String(), "hunter2") {
		t.Fatalf("error %v, string %s", err, s.String())
	}
	if _, err := delivery.ParseSMTPURL("smtp://user:hunter2-pass@", "a@example.com"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad URL error %v", err)
	}
	for _, tt := range []struct{ url, from string }{
		{"http://host", "a@example.com"}, {"smtp://host", "not an address"}, {"", "a@example.com"},
	} {
		if _, err := delivery.ParseSMTPURL(tt.url, tt.from); err == nil {
			t.Errorf("%q %q accepted", tt.url, tt.from)
		}
	}
	ss, err := delivery.ParseSMTPURL("smtps://mail.example.com", "a@example.com")
	if err != nil || !ss.Implicit || ss.Port != "465" {
		t.Fatalf("smtps: %+v %v", ss, err)
	}
}

func newBase64Reader(r io.Reader) io.Reader { return base64.NewDecoder(base64.StdEncoding, r) }

func newSQLite(t *testing.T) store { return storetest.NewSQLiteStore(t) }

// The e-mail's PDF is the printed representation of the stored XML: read
// back with poppler's pdftotext, it holds the clave, the consecutivo and
// the total.
func TestEmailPDFReadBack(t *testing.T) {
	f := newFixture(t, newSQLite(t))
	_, b := f.company(t, "Impresa S.A.")
	st := smtptest.New(t)
	doc := sample.Documents(9, 1)[0]
	x, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"}, func(d *tenant.Document) {
		d.SignedXML, d.Clave, d.Consecutivo = x, doc.Clave, doc.NumeroConsecutivo
	})
	// Printed as the service prints it on the sandbox.
	f.mailer(t, smtpConfig(t, st), delivery.PrintedPDF{Renders: pdf.NewLimiter(1, 1), Printer: printed.Printer{Sandbox: true}})
	waitFor(t, func() bool {
		st.Mu.Lock()
		defer st.Mu.Unlock()
		return len(st.Messages) == 1
	})
	st.Mu.Lock()
	defer st.Mu.Unlock()
	var pdfBytes []byte
	for _, m := range st.Messages {
		parts := parseMessage(t, m.Data)
		if p := parts[doc.Clave+".pdf"]; p != nil {
			pdfBytes = p
		}
	}
	if pdfBytes == nil {
		t.Fatal("no PDF attachment named after the generated document's clave")
	}
	text := strings.Join(strings.Fields(pdfcheck.Text(t, pdfBytes)), " ")
	total := figures(doc.ResumenFactura.TotalComprobante.Decimal().StringFixed(5))
	for _, w := range []string{doc.Clave, doc.NumeroConsecutivo, total,
		"Autorizada mediante resolución N° MH-DGT-RES-0027-2024 del 13 de noviembre de 2024",
		"SIN VALIDEZ TRIBUTARIA — AMBIENTE DE PRUEBAS", "Aceptado por el simulador"} {
		if !strings.Contains(text, w) {
			t.Errorf("no %q in the PDF's text: %s", w, text)
		}
	}
}

// figures writes an amount as the PDF prints it (120.500,50), spelled
// independently of the renderer.
func figures(s string) string {
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	var groups []string
	for len(whole) > 3 {
		groups = append([]string{whole[len(whole)-3:]}, groups...)
		whole = whole[:len(whole)-3]
	}
	return strings.Join(append([]string{whole}, groups...), ".") + "," + frac
}

// Send classifies a failed session by its stage: before the message is
// named (AUTH, MAIL FROM) a 5xx is the service's fault, not the
// message's; at DATA it refuses the message for good; every recipient
// refused at RCPT too, unless the enhanced code names the relay's policy
// (5.7.x, 5.3.x, 5.5.x, 530 at RCPT; 5.7.x at DATA): the service's again.
func TestSMTPFailureStages(t *testing.T) {
	msg := delivery.Message{To: []string{"compras@example.com"}, Subject: "x", Text: "x", MessageID: "x@facturad"}
	for _, tt := range []struct {
		name            string
		set             func(st *smtptest.Server)
		stage           string
		code            int
		permanent, serv bool
	}{
		{"auth 535", func(st *smtptest.Server) { st.FailAuth = 535 }, "auth", 535, false, true},
		{"auth 454", func(st *smtptest.Server) { st.FailAuth = 454 }, "auth", 454, false, true},
		{"mail 550", func(st *smtptest.Server) { st.FailMail = 550 }, "mail", 550, false, true},
		{"data 554", func(st *smtptest.Server) { st.FailData = 554 }, "data", 554, true, false},
		{"data 451", func(st *smtptest.Server) { st.FailData = 451 }, "data", 451, false, false},
		{"every rcpt 550", func(st *smtptest.Server) { st.Refuse["compras@example.com"] = true }, "rcpt", 0, true, false},
		// A 4xx at RCPT (greylisting) is tried again, not a refusal.
		{"rcpt 450 4.2.0 greylisted", func(st *smtptest.Server) { st.Greylist["compras@example.com"] = true }, "rcpt", 450, false, false},
		{"rcpt 451 without an enhanced code", func(st *smtptest.Server) {
			st.RcptReply = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.NoEnhancedCode, Message: "try again later"}
		}, "rcpt", 451, false, false},
		// The enhanced code tells the relay's policy from the address.
		{"rcpt 550 5.1.1 no such mailbox", func(st *smtptest.Server) { st.RcptReply = relayReply(550, 5, 1, 1, "no such mailbox") }, "rcpt", 0, true, false},
		{"rcpt 552 5.2.2 mailbox full", func(st *smtptest.Server) { st.RcptReply = relayReply(552, 5, 2, 2, "mailbox full") }, "rcpt", 0, true, false},
		{"rcpt 554 5.7.1 relay denied", func(st *smtptest.Server) {
			st.RcptReply = relayReply(554, 5, 7, 1, "<compras@example.com>: Relay access denied")
		}, "rcpt", 554, false, true},
		{"rcpt 550 5.7.0 relay denied", func(st *smtptest.Server) { st.RcptReply = relayReply(550, 5, 7, 0, "Mail relay denied") }, "rcpt", 550, false, true},
		{"rcpt 530 authentication required", func(st *smtptest.Server) {
			st.RcptReply = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.NoEnhancedCode, Message: "Authentication required"}
		}, "rcpt", 530, false, true},
		{"rcpt 553 5.3.0 mail system", func(st *smtptest.Server) { st.RcptReply = relayReply(553, 5, 3, 0, "mail system unavailable") }, "rcpt", 553, false, true},
		{"rcpt 503 5.5.1 protocol", func(st *smtptest.Server) { st.RcptReply = relayReply(503, 5, 5, 1, "need MAIL command") }, "rcpt", 503, false, true},
		// The sender's address, refused at RCPT, is smtp_from's: the service's.
		{"rcpt 553 5.1.8 bad sender domain", func(st *smtptest.Server) { st.RcptReply = relayReply(553, 5, 1, 8, "sender domain does not exist") }, "rcpt", 553, false, true},
		{"rcpt 553 5.1.7 bad sender address", func(st *smtptest.Server) { st.RcptReply = relayReply(553, 5, 1, 7, "bad sender address syntax") }, "rcpt", 553, false, true},
		{"rcpt 553 5.1.0 sender address rejected", func(st *smtptest.Server) {
			st.RcptReply = relayReply(553, 5, 1, 0, "<facturas@example.com>: Sender address rejected: not owned by user")
		}, "rcpt", 553, false, true},
		{"rcpt 550 5.1.0 recipient address rejected", func(st *smtptest.Server) {
			st.RcptReply = relayReply(550, 5, 1, 0, "<compras@example.com>: Recipient address rejected: unknown user")
		}, "rcpt", 0, true, false},
		// No enhanced code: today's rule, the address's refusal.
		{"rcpt 550 without an enhanced code", func(st *smtptest.Server) {
			st.RcptReply = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.NoEnhancedCode, Message: "relay not permitted"}
		}, "rcpt", 0, true, false},
		{"data 550 5.7.1 SPF", func(st *smtptest.Server) { st.DataReply = relayReply(550, 5, 7, 1, "sender domain fails SPF") }, "data", 550, false, true},
		{"data 552 5.3.4 too big", func(st *smtptest.Server) { st.DataReply = relayReply(552, 5, 3, 4, "message too big") }, "data", 552, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := smtptest.New(t)
			st.Mu.Lock()
			tt.set(st)
			st.Mu.Unlock()
			_, err := smtpConfig(t, st).Send(context.Background(), msg)
			var se *delivery.SendError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a SendError", err)
			}
			if se.Stage != tt.stage || se.Code != tt.code || se.Permanent != tt.permanent || se.Service != tt.serv {
				t.Fatalf("%+v, want stage %s code %d permanent %v service %v", se, tt.stage, tt.code, tt.permanent, tt.serv)
			}
		})
	}
	// Nothing listening: the service's fault too.
	s, err := delivery.ParseSMTPURL("smtp://127.0.0.1:1", "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), msg)
	var se *delivery.SendError
	if !errors.As(err, &se) || se.Stage != "connect" || !se.Service || se.Permanent {
		t.Fatalf("no server: %#v", err)
	}
}

// A recipient deferred at RCPT (a greylisting 450) is not refused: the
// session gives up for every recipient, none gets the message now and none
// is recorded as rejected, and all are tried again together.
func TestSMTPGreylistedRecipientDeferred(t *testing.T) {
	st := smtptest.New(t)
	st.Mu.Lock()
	st.Greylist["nuevo@example.com"] = true
	st.Mu.Unlock()
	msg := delivery.Message{To: []string{"compras@example.com", "nuevo@example.com"}, Subject: "x", Text: "x", MessageID: "x@facturad"}
	res, err := smtpConfig(t, st).Send(context.Background(), msg)
	var se *delivery.SendError
	if !errors.As(err, &se) || se.Stage != "rcpt" || se.Code != 450 || se.Permanent || se.Service {
		t.Fatalf("Send = %#v, want a temporary rcpt error 450", err)
	}
	if len(res.Rejected) != 0 {
		t.Fatalf("rejected %+v, want none", res.Rejected)
	}
	st.Mu.Lock()
	n := len(st.Messages)
	st.Mu.Unlock()
	if n != 0 {
		t.Fatalf("%d messages sent, want none while a recipient is deferred", n)
	}
}

// relayReply is a refusal with an enhanced status code.
func relayReply(code, class, subject, detail int, msg string) *smtp.SMTPError {
	return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{class, subject, detail}, Message: msg}
}

// A mail server that refuses our credentials (535 to AUTH), or that
// refuses to relay for us at RCPT (Postfix's 554 5.7.1, its default of
// reporting restrictions there), is the operator's to fix, not the
// documents' fault: the e-mails stay pending with a next attempt, the
// fault is logged at warn once (not per e-mail nor per attempt), and once
// the server accepts they are delivered and the recovery is logged.
func TestEmailAuthRefusedWaitsForTheServer(t *testing.T) {
	for _, tt := range []struct {
		name       string
		fault, fix func(st *smtptest.Server)
	}{
		{"auth 535", func(st *smtptest.Server) { st.Set(&st.FailAuth, 535) }, func(st *smtptest.Server) { st.Set(&st.FailAuth, 0) }},
		{"rcpt 554 5.7.1 relay denied", func(st *smtptest.Server) {
			st.Mu.Lock()
			defer st.Mu.Unlock()
			st.RcptReply = relayReply(554, 5, 7, 1, "Relay access denied")
		}, func(st *smtptest.Server) {
			st.Mu.Lock()
			defer st.Mu.Unlock()
			st.RcptReply = nil
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { serverFaultWaits(t, tt.fault, tt.fix) })
	}
}

func serverFaultWaits(t *testing.T, fault, fix func(st *smtptest.Server)) {
	eachStore(t, func(t *testing.T, s store) {
		f := newFixture(t, s)
		_, b := f.company(t, "Credenciales S.A.")
		st := smtptest.New(t)
		fault(st)
		var docs []tenant.Document
		for i := range 3 {
			docs = append(docs, f.event(t, b, tenant.StateAccepted, []string{fmt.Sprintf("compras%d@example.com", i)}))
		}
		logs := newRecordingHandler()
		// One worker: the attempts come one after another, so a session that
		// began before the server changed cannot end after one that began later.
		f.mailerWith(t, smtpConfig(t, st), nil, func(o *delivery.MailerOptions) { o.Logger, o.Workers = slog.New(logs), 1 })
		waitFor(t, func() bool {
			for _, d := range docs {
				if es := f.emails(t, d); len(es) != 1 || es[0].Attempts < 3 {
					return false
				}
			}
			return true
		})
		for _, d := range docs {
			e := f.emails(t, d)[0]
			if e.State() != tenant.DeliveryPending || e.NextAttemptAt.IsZero() || e.LastError != delivery.ServiceFaultText {
				t.Fatalf("e-mail while the server refuses our credentials: %+v", e)
			}
		}
		if n := logs.count(slog.LevelWarn, "the mail server cannot be used"); n != 1 {
			t.Fatalf("%d warnings of the server's fault over 9 or more attempts, want 1: %v", n, logs.messages())
		}
		if n := logs.count(slog.LevelWarn, ""); n != 1 {
			t.Fatalf("%d warnings in all, want the one: %v", n, logs.messages())
		}
		if v := attempts(t, f.reg, "email", "failed"); v != 0 {
			t.Fatalf("%v e-mails failed", v)
		}
		fix(st)
		waitFor(t, func() bool {
			for _, d := range docs {
				if es := f.emails(t, d); es[0].State() != tenant.DeliveryDelivered {
					return false
				}
			}
			return true
		})
		st.Mu.Lock()
		n, authed := len(st.Messages), !slices.Contains(st.Authed, false)
		st.Mu.Unlock()
		if n != 3 || !authed {
			t.Fatalf("%d messages (authenticated: %v), want 3", n, authed)
		}
		if n := logs.count(slog.LevelInfo, "the mail server takes e-mails again"); n != 1 {
			t.Fatalf("%d recoveries logged, want 1: %v", n, logs.messages())
		}
		if strings.Contains(strings.Join(logs.messages(), "\n"), st.Pass) {
			t.Fatal("the SMTP password is in the log")
		}
	})
}

// recordingHandler is a slog handler keeping every record's level,
// message and attributes, those given to Logger.With included (groups are
// flattened).
type recordingHandler struct {
	shared *recorded
	attrs  []slog.Attr
}

type recorded struct {
	mu   sync.Mutex
	recs []slog.Record
}

func newRecordingHandler() *recordingHandler { return &recordingHandler{shared: &recorded{}} }

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.shared.mu.Lock()
	defer h.shared.mu.Unlock()
	h.shared.recs = append(h.shared.recs, r)
	return nil
}
func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordingHandler{shared: h.shared, attrs: append(slices.Clip(h.attrs), as...)}
}
func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// count is how many records of level start with prefix.
func (h *recordingHandler) count(level slog.Level, prefix string) int {
	h.shared.mu.Lock()
	defer h.shared.mu.Unlock()
	n := 0
	for _, r := range h.shared.recs {
		if r.Level == level && strings.HasPrefix(r.Message, prefix) {
			n++
		}
	}
	return n
}

// messages are the records as text, attributes included.
func (h *recordingHandler) messages() []string {
	h.shared.mu.Lock()
	defer h.shared.mu.Unlock()
	var out []string
	for _, r := range h.shared.recs {
		line := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			line += " " + a.String()
			return true
		})
		out = append(out, line)
	}
	return out
}

// Probe takes a session (TLS included) and sends nothing; it fails on a
// server that does not answer, and on one whose certificate is not
// trusted.
func TestSMTPProbe(t *testing.T) {
	ctx := context.Background()
	st := smtptest.New(t)
	s := smtpConfig(t, st)
	if err := s.Probe(ctx); err != nil {
		t.Fatalf("probe of a working server: %v", err)
	}
	st.Mu.Lock()
	n := len(st.Messages)
	st.Mu.Unlock()
	if n != 0 {
		t.Errorf("the probe left %d messages", n)
	}
	untrusted := s
	untrusted.TLS = &tls.Config{}
	if err := untrusted.Probe(ctx); err == nil {
		t.Error("probe with an untrusted certificate succeeded")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := s
	dead.Host, dead.Port, _ = net.SplitHostPort(ln.Addr().String())
	ln.Close()
	if err := dead.Probe(ctx); err == nil {
		t.Error("probe of a closed port succeeded")
	}
}
