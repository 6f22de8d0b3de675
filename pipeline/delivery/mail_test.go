package delivery_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"facturad/hacienda"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/hacienda/sample"
	"facturad/pipeline/delivery"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// smtpServer is a real SMTP server (emersion/go-smtp) on a loopback port,
// offering STARTTLS with a test certificate and AUTH PLAIN, refusing the
// recipients named in refuse with a 550.
type smtpServer struct {
	addr   string
	roots  *x509.CertPool
	user   string
	pass   string
	refuse map[string]bool
	// failData answers DATA with this code when set (554: refused for
	// good; 451: try later).
	failData int

	mu       sync.Mutex
	messages []received
	tls      []bool
	authed   []bool
}

type received struct {
	from string
	to   []string
	data []byte
}

type smtpSession struct {
	s      *smtpServer
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.s.user || pass != s.s.pass {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}
func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.s.refuse[to] {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = append(s.to, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.s.failData != 0 {
		return &smtp.SMTPError{Code: s.s.failData, Message: "message refused"}
	}
	s.s.mu.Lock()
	defer s.s.mu.Unlock()
	s.s.messages = append(s.s.messages, received{s.from, s.to, b})
	_, isTLS := s.conn.TLSConnectionState()
	s.s.tls = append(s.s.tls, isTLS)
	s.s.authed = append(s.s.authed, s.authed)
	return nil
}
func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

func newSMTPServer(t *testing.T) *smtpServer {
	t.Helper()
	cert, roots := testCertificate(t)
	st := &smtpServer{roots: roots, user: "facturas", pass: "s3cret-smtp-pass", refuse: map[string]bool{}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{s: st, conn: c}, nil
	}))
	srv.Domain = "mail.test"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 10 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return st
}

// testCertificate is a self-signed certificate for 127.0.0.1.
func testCertificate(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mail.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"mail.test"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: c}, pool
}

func (st *smtpServer) config(t *testing.T) delivery.SMTP {
	t.Helper()
	host, port, _ := net.SplitHostPort(st.addr)
	s, err := delivery.ParseSMTPURL("smtp://"+st.user+":"+st.pass+"@"+net.JoinHostPort(host, port), "Facturación <facturas@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	s.TLS = &tls.Config{RootCAs: st.roots}
	return s
}

// fixedPDF is a PDF renderer returning known bytes, so that the
// attachment can be compared byte for byte.
type fixedPDF struct{}

func (fixedPDF) DocumentPDF(_ context.Context, d tenant.Document) ([]byte, error) {
	return []byte("%PDF-1.4\n% " + d.Clave + "\n%%EOF\n"), nil
}

func (f *fixture) mailer(t *testing.T, sender delivery.Sender, pdf delivery.PDFRenderer) {
	t.Helper()
	m, err := delivery.NewMailer(delivery.MailerOptions{
		Store: f.s, Sender: sender, PDF: pdf, PollInterval: 10 * time.Millisecond,
		BackoffBase: 20 * time.Millisecond, BackoffMax: 50 * time.Millisecond, Logger: quiet, Registerer: f.reg,
	})
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
		st := newSMTPServer(t)
		st.refuse["nadie@example.com"] = true
		d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com", "nadie@example.com", "conta@example.com"})
		f.mailer(t, st.config(t), fixedPDF{})
		waitFor(t, func() bool {
			es := f.emails(t, d)
			return len(es) == 1 && es[0].State() == tenant.DeliveryDelivered
		})
		e := f.emails(t, d)[0]
		if len(e.Rejected) != 1 || e.Rejected[0].Address != "nadie@example.com" || e.Rejected[0].Code != 550 ||
			!strings.Contains(e.Rejected[0].Message, "no such mailbox") || e.Attempts != 1 {
			t.Fatalf("e-mail %+v", e)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.messages) != 1 || !st.tls[0] || !st.authed[0] {
			t.Fatalf("%d messages, tls %v, authenticated %v", len(st.messages), st.tls, st.authed)
		}
		msg := st.messages[0]
		if msg.from != "facturas@example.com" || !slices.Equal(msg.to, []string{"compras@example.com", "conta@example.com"}) {
			t.Fatalf("envelope from %s to %v", msg.from, msg.to)
		}
		parts := parseMessage(t, msg.data)
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
	if err != nil || !strings.HasPrefix(subject, "Comprobante electrónico ") {
		t.Fatalf("subject %q: %v", subject, err)
	}
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
		st := newSMTPServer(t)
		st.failData = 554
		d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"})
		f.mailer(t, st.config(t), nil)
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
	st := newSMTPServer(t)
	st.failData = 451
	d := f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"})
	f.mailer(t, st.config(t), nil)
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return len(es) == 1 && es[0].Attempts >= 2
	})
	st.mu.Lock()
	st.failData = 0
	st.mu.Unlock()
	waitFor(t, func() bool {
		es := f.emails(t, d)
		return es[0].State() == tenant.DeliveryDelivered
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.messages) != 1 {
		t.Fatalf("%d messages", len(st.messages))
	}
	parts := parseMessage(t, st.messages[0].data)
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
	st := newSMTPServer(t)
	doc := sample.Documents(9, 1)[0]
	x, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	f.event(t, b, tenant.StateAccepted, []string{"compras@example.com"}, func(d *tenant.Document) {
		d.SignedXML, d.Clave, d.Consecutivo = x, doc.Clave, doc.NumeroConsecutivo
	})
	f.mailer(t, st.config(t), delivery.PrintedPDF{})
	waitFor(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return len(st.messages) == 1
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	var pdfBytes []byte
	for _, m := range st.messages {
		parts := parseMessage(t, m.data)
		if p := parts[doc.Clave+".pdf"]; p != nil {
			pdfBytes = p
		}
	}
	if pdfBytes == nil {
		t.Fatal("no PDF attachment named after the generated document's clave")
	}
	text := strings.Join(strings.Fields(pdfcheck.Text(t, pdfBytes)), " ")
	total := figures(doc.ResumenFactura.TotalComprobante.Decimal().StringFixed(5))
	for _, w := range []string{doc.Clave, doc.NumeroConsecutivo, total} {
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
