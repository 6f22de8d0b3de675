// Package smtptest runs a real SMTP server (emersion/go-smtp) on a
// loopback port for tests: STARTTLS with a certificate of its own, AUTH
// PLAIN, and the refusals and failures a mail server gives, set by the
// test. It is for tests only; nothing the service runs imports it.
package smtptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Server is a real SMTP server (emersion/go-smtp) on a loopback port,
// offering STARTTLS with a test certificate and AUTH PLAIN, refusing the
// recipients named in Refuse with a 550 and deferring those in Greylist
// with a 450. Read what it received under Mu.
type Server struct {
	Addr  string
	Roots *x509.CertPool
	// CertPEM is the server's certificate, which Roots holds, in PEM (a
	// process of its own trusts it through SSL_CERT_FILE).
	CertPEM  []byte
	User     string
	Pass     string
	Refuse   map[string]bool
	Greylist map[string]bool
	// FailData answers DATA with this code when set (554: refused for
	// good; 451: try later); FailAuth answers AUTH, FailMail MAIL FROM
	// likewise (535: bad credentials; 550: sender refused). Set them
	// with Set once the server runs.
	FailData, FailAuth, FailMail int
	// RcptReply answers every RCPT, DataReply the end of DATA, when set
	// under Mu (an enhanced code of their own, as a relay's policy
	// refusals).
	RcptReply, DataReply *smtp.SMTPError

	// Mu guards what follows: per message taken, the message, whether
	// its session was over TLS and whether it authenticated.
	Mu       sync.Mutex
	Messages []Message
	TLS      []bool
	Authed   []bool
}

// Message is a message the server took: its envelope and its data, and
// whether MAIL FROM said SMTPUTF8.
type Message struct {
	From string
	To   []string
	Data []byte
	UTF8 bool
}

type smtpSession struct {
	s      *Server
	conn   *smtp.Conn
	authed bool
	from   string
	utf8   bool
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if code := s.s.fail(&s.s.FailAuth); code != 0 {
			return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 7, 8}, Message: "authentication credentials invalid"}
		}
		if user != s.s.User || pass != s.s.Pass {
			return errors.New("bad credentials")
		}
		s.authed = true
		return nil
	}), nil
}
func (s *smtpSession) Mail(from string, opts *smtp.MailOptions) error {
	if code := s.s.fail(&s.s.FailMail); code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 7, 1}, Message: "sender not allowed to relay"}
	}
	s.from, s.utf8 = from, opts != nil && opts.UTF8
	return nil
}

// fail reads one of the server's failure codes under its lock.
func (st *Server) fail(code *int) int {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	return *code
}

// Set changes one of the server's failure codes while it runs.
func (st *Server) Set(code *int, v int) {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	*code = v
}
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.s.Mu.Lock()
	reply := s.s.RcptReply
	s.s.Mu.Unlock()
	if reply != nil {
		return reply
	}
	if s.s.Refuse[to] {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	if s.s.Greylist[to] {
		return &smtp.SMTPError{Code: 450, EnhancedCode: smtp.EnhancedCode{4, 2, 0}, Message: "Greylisted, please try again later"}
	}
	s.to = append(s.to, to)
	return nil
}
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if code := s.s.fail(&s.s.FailData); code != 0 {
		return &smtp.SMTPError{Code: code, Message: "message refused"}
	}
	s.s.Mu.Lock()
	reply := s.s.DataReply
	s.s.Mu.Unlock()
	if reply != nil {
		return reply
	}
	s.s.Mu.Lock()
	defer s.s.Mu.Unlock()
	s.s.Messages = append(s.s.Messages, Message{s.from, s.to, b, s.utf8})
	_, isTLS := s.conn.TLSConnectionState()
	s.s.TLS = append(s.s.TLS, isTLS)
	s.s.Authed = append(s.s.Authed, s.authed)
	return nil
}
func (s *smtpSession) Reset()        { s.from, s.to, s.utf8 = "", nil, false }
func (s *smtpSession) Logout() error { return nil }

// Options are a server's capabilities beyond the defaults.
type Options struct {
	// SMTPUTF8 advertises SMTPUTF8 (RFC 6531): addresses in UTF-8. A
	// server without it (the default) still takes such an address raw,
	// as some do; Message.To shows what it was given.
	SMTPUTF8 bool
}

// New starts a server for the test, closed when it ends; o, when given,
// sets its capabilities.
func New(t testing.TB, o ...Options) *Server {
	t.Helper()
	var opts Options
	if len(o) > 0 {
		opts = o[0]
	}
	cert, roots := testCertificate(t)
	st := &Server{Roots: roots, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), User: "facturas", Pass: "s3cret-smtp-pass", Refuse: map[string]bool{}, Greylist: map[string]bool{}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{s: st, conn: c}, nil
	}))
	srv.Domain = "mail.test"
	srv.EnableSMTPUTF8 = opts.SMTPUTF8
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 10 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st.Addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return st
}

// testCertificate is a self-signed certificate for 127.0.0.1.
func testCertificate(t testing.TB) (tls.Certificate, *x509.CertPool) {
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

// URL is the server as FACTURAD_SMTP_URL names it, with its user and
// password (trust its certificate through Roots).
func (st *Server) URL() string { return "smtp://" + st.User + ":" + st.Pass + "@" + st.Addr }

// Received returns a copy of the messages taken so far.
func (st *Server) Received() []Message {
	st.Mu.Lock()
	defer st.Mu.Unlock()
	return append([]Message(nil), st.Messages...)
}
