package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"facturad/tenant"
)

// SMTP is the outgoing mail server, from FACTURAD_SMTP_URL:
// smtp://user:pass@host:port (STARTTLS whenever the server offers it;
// port 587 by default) or smtps://user:pass@host:port (TLS from the first
// byte; port 465 by default). The password is never logged: String leaves
// it out.
type SMTP struct {
	Host     string // host name, also the name checked on the certificate
	Port     string
	Implicit bool // smtps: TLS from the start
	Username string
	Password string
	From     string // the envelope and header sender, FACTURAD_SMTP_FROM
	// TLS overrides the TLS settings (tests: a private authority); its
	// ServerName is set from Host when empty.
	TLS *tls.Config
	// Timeout bounds one whole session (default 60s).
	Timeout time.Duration
	// LocalName is the name said in EHLO (default "localhost").
	LocalName string
}

// SMTPSettingError is ParseSMTPURL's refusal: which of its two settings
// is wrong, smtp_url or smtp_from, and how.
type SMTPSettingError struct {
	Setting, Problem string
}

func (e *SMTPSettingError) Error() string { return e.Setting + ": " + e.Problem }

// ParseSMTPURL reads FACTURAD_SMTP_URL and FACTURAD_SMTP_FROM. Its errors
// are *SMTPSettingError and never quote the URL (it holds a password).
func ParseSMTPURL(raw, from string) (SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return SMTP{}, &SMTPSettingError{"smtp_url", "must be smtp://user:password@host:port or smtps://…"}
	}
	s := SMTP{Host: u.Hostname(), Port: u.Port()}
	switch u.Scheme {
	case "smtp":
		if s.Port == "" {
			s.Port = "587"
		}
	case "smtps":
		s.Implicit = true
		if s.Port == "" {
			s.Port = "465"
		}
	default:
		return SMTP{}, &SMTPSettingError{"smtp_url", "the scheme must be smtp or smtps"}
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		return SMTP{}, &SMTPSettingError{"smtp_from", "must be an e-mail address, such as Facturación <facturas@example.com>"}
	}
	s.From = a.String()
	return s, nil
}

// String describes the server without its password.
func (s SMTP) String() string {
	scheme := "smtp"
	if s.Implicit {
		scheme = "smtps"
	}
	user := ""
	if s.Username != "" {
		user = s.Username + "@"
	}
	return scheme + "://" + user + net.JoinHostPort(s.Host, s.Port)
}

// Message is one e-mail: its recipients, subject, text and attachments.
type Message struct {
	To []string
	// FromName is the display name of the From header, shown with the
	// platform's address (smtp_from): the issuer's name on a document's
	// e-mail. Empty keeps smtp_from's own name. Control characters and
	// runs of spaces become one space; the header encodes the rest (RFC
	// 2047), so no name can add a header.
	FromName string
	// ReplyTo are the addresses a reply goes to (the issuer's); none
	// writes no Reply-To. An address the session cannot write (not an
	// address, or one outside ASCII for a server without SMTPUTF8) is
	// left out.
	ReplyTo     []string
	Subject     string
	Text        string
	MessageID   string
	Attachments []Attachment
}

// Attachment is a file attached to a Message.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// SendResult is what the server said of one message.
type SendResult struct {
	// Rejected are the recipients the server refused for good (5xx at
	// RCPT); the message went to the others.
	Rejected []tenant.EmailRejection
}

// SendError is a failed session. Permanent when the server refused this
// message for good (5xx at DATA or at its end, or every recipient refused
// at RCPT for reasons of the address). Service when the session failed
// before the message was named (connecting, TLS, AUTH, MAIL FROM, 5xx
// replies included), or when a refusal's enhanced status code (RFC 3463)
// names the relay's policy or the protocol rather than the address or the
// message (5.7.x, 5.3.x, 5.5.x or 530 at RCPT, 5.7.x at DATA: relaying
// denied, authentication required, the sender refused by SPF or DMARC): a
// fault of the mail server or of the service's configuration (smtp_url,
// smtp_from) that every e-mail meets alike, so it is tried again, never
// held against the message. Anything else (a 4xx, a broken connection, a
// timeout) is tried again too.
type SendError struct {
	Permanent bool
	Service   bool
	Stage     string // connect, tls, auth, mail, rcpt, data; document, pdf, notice before a session
	Code      int    // the server's reply code, 0 when none
	Msg       string
}

func (e *SendError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("smtp %s: %d %s", e.Stage, e.Code, e.Msg)
	}
	return fmt.Sprintf("smtp %s: %s", e.Stage, e.Msg)
}

// Send delivers m through the server: STARTTLS when offered (or TLS from
// the start with smtps), AUTH PLAIN when a user is set (net/smtp refuses
// to send the password without TLS unless the server is on loopback),
// one RCPT per address. Recipients refused with a 5xx are reported and
// the rest receive the message; a 4xx at any step fails the session (tried
// again later) so that nobody gets it twice.
func (s SMTP) Send(ctx context.Context, m Message) (SendResult, error) {
	c, done, err := s.open(ctx)
	if err != nil {
		return SendResult{}, err
	}
	defer done()
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host)); err != nil {
			// The server's answer or net/smtp's refusal; never the password.
			return SendResult{}, smtpErr("auth", err)
		}
	}
	// With SMTPUTF8 (RFC 6531) net/smtp says so on MAIL FROM and every
	// address goes as written; without it, only in ASCII (envelopeAddress).
	utf8OK, _ := c.Extension("SMTPUTF8")
	from, _ := mail.ParseAddress(s.From)
	fromAddr, why := envelopeAddress(from.Address, utf8OK)
	if why != "" {
		return SendResult{}, &SendError{Service: true, Stage: "mail", Msg: "smtp_from: " + why}
	}
	if err := c.Mail(fromAddr); err != nil {
		return SendResult{}, smtpErr("mail", err)
	}
	var res SendResult
	accepted := 0
	// The recipients as the session writes them, in the envelope and in
	// the To header alike.
	named := make([]string, 0, len(m.To))
	for _, to := range m.To {
		addr, why := envelopeAddress(to, utf8OK)
		if why != "" {
			// Never sent raw: this recipient fails for good, the
			// others still get the message.
			res.Rejected = append(res.Rejected, tenant.EmailRejection{Address: to, Message: why})
			continue
		}
		named = append(named, addr)
		err := c.Rcpt(addr)
		var te *textproto.Error
		switch {
		case err == nil:
			accepted++
		case errors.As(err, &te) && te.Code >= 500 && !serviceRefusal(te, "rcpt"):
			res.Rejected = append(res.Rejected, tenant.EmailRejection{Address: to, Code: te.Code, Message: truncate(te.Msg, 300)})
		default:
			// A 4xx, a broken session, or a refusal that is the relay's
			// policy rather than this address's (relaying denied,
			// authentication required): nobody gets the message now,
			// everybody later.
			_ = c.Reset()
			return res, smtpErr("rcpt", err)
		}
	}
	if accepted == 0 {
		_ = c.Reset()
		return res, &SendError{Permanent: true, Stage: "rcpt", Msg: "every recipient was refused"}
	}
	m.To = named
	name := from.Name
	if n := headerText(m.FromName); n != "" {
		name = n
	}
	m.ReplyTo = replyAddresses(m.ReplyTo, utf8OK)
	body, err := s.compose(m, (&mail.Address{Name: name, Address: fromAddr}).String())
	if err != nil {
		return res, &SendError{Permanent: true, Stage: "data", Msg: err.Error()}
	}
	w, err := c.Data()
	if err != nil {
		return res, smtpErr("data", err)
	}
	if _, err := w.Write(body); err != nil {
		return res, smtpErr("data", err)
	}
	if err := w.Close(); err != nil {
		return res, smtpErr("data", err)
	}
	_ = c.Quit()
	return res, nil
}

// open connects to the server under the session's deadline, says EHLO
// and starts TLS when offered (or from the start with smtps). done closes
// the session.
func (s SMTP) open(ctx context.Context) (_ *smtp.Client, done func(), err error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	tlsConf := s.tlsConfig()
	addr := net.JoinHostPort(s.Host, s.Port)
	dialer := &net.Dialer{Deadline: deadline}
	var conn net.Conn
	if s.Implicit {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConf}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, nil, smtpErr("connect", err)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		conn.Close()
		return nil, nil, smtpErr("connect", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		stop()
		conn.Close()
		return nil, nil, smtpErr("connect", err)
	}
	done = func() {
		stop()
		c.Close()
		conn.Close()
	}
	local := s.LocalName
	if local == "" {
		local = "localhost"
	}
	if err := c.Hello(local); err != nil {
		done()
		return nil, nil, smtpErr("connect", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !s.Implicit {
		if err := c.StartTLS(tlsConf); err != nil {
			done()
			return nil, nil, smtpErr("tls", err)
		}
	}
	return c, done, nil
}

// Probe tells whether the server takes a session: it connects, says EHLO,
// starts TLS as Send does, and quits, without logging in or sending
// anything (a login every probe would weigh on the server and may lock
// the account on a wrong password; the e-mails' own failures say that).
func (s SMTP) Probe(ctx context.Context) error {
	c, done, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Quit(); err != nil {
		return smtpErr("quit", err)
	}
	return nil
}

func (s SMTP) tlsConfig() *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.TLS != nil {
		c = s.TLS.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = s.Host
	}
	return c
}

// smtpErr classifies a failed step by its stage. Before the message is
// named (connect, tls, auth, mail) any failure, a 5xx included, is the
// service's (a wrong password, a server without AUTH, a sender the relay
// refuses): tried again, every e-mail alike. At RCPT and DATA a 5xx whose
// enhanced code names the relay's policy is the service's too
// (serviceRefusal). Otherwise a 5xx at DATA refuses this message for good.
// Anything else (a 4xx, a broken connection, a timeout) is tried again.
// (Any other 5xx at RCPT refuses one address; Send records it.)
func smtpErr(stage string, err error) *SendError {
	e := &SendError{Stage: stage, Msg: truncate(err.Error(), 300)}
	var te *textproto.Error
	if errors.As(err, &te) {
		e.Code, e.Msg = te.Code, truncate(te.Msg, 300)
	}
	switch {
	case stage == "connect" || stage == "tls" || stage == "auth" || stage == "mail":
		e.Service = true
	case te != nil && serviceRefusal(te, stage):
		e.Service = true
	case stage == "data":
		e.Permanent = e.Code >= 500
	}
	return e
}

// serviceRefusal tells whether a 5xx reply at RCPT or DATA is the relay's
// refusal of the service rather than of one address or one message, by its
// enhanced status code (RFC 3463), which servers put first in the text:
// 5.7.x (security or policy: relaying denied, authentication required, the
// sender's domain refused by SPF or DMARC) at either step; at RCPT also
// 5.3.x (the mail system) and 5.5.x (the protocol), and 530
// (authentication required) whatever the text. 5.1.x and 5.2.x (no such
// mailbox or domain, a full or disabled mailbox) are the address's, but
// for the sender's: 5.1.7 and 5.1.8 (a bad sender address or domain,
// smtp_from's), and a 5.1.0 that names the sender (Postfix's "Sender
// address rejected", given at RCPT by default) are the service's. A reply
// without an enhanced code keeps the stage's rule.
func serviceRefusal(te *textproto.Error, stage string) bool {
	if te.Code < 500 {
		return false
	}
	if stage == "rcpt" && te.Code == 530 {
		return true
	}
	class, subject, detail, ok := enhancedCode(te.Msg)
	if !ok || class != 5 {
		return false
	}
	switch {
	case subject == 7:
		return stage == "rcpt" || stage == "data"
	case stage != "rcpt":
		return false
	case subject == 3 || subject == 5:
		return true
	case subject == 1 && (detail == 7 || detail == 8):
		return true
	case subject == 1 && detail == 0:
		return strings.Contains(strings.ToLower(te.Msg), "sender")
	}
	return false
}

// enhancedCode reads the enhanced status code (class.subject.detail) at
// the start of a reply's text, as "5.7.1 Relay access denied": the class
// one digit, 2, 4 or 5, the subject and the detail one to three digits
// (RFC 3463), so "05.7.1" is no code.
func enhancedCode(msg string) (class, subject, detail int, ok bool) {
	word, _, _ := strings.Cut(strings.TrimSpace(msg), " ")
	parts := strings.Split(word, ".")
	if len(parts) != 3 || len(parts[0]) != 1 {
		return 0, 0, 0, false
	}
	var n [3]int
	for i, p := range parts {
		if len(p) == 0 || len(p) > 3 {
			return 0, 0, 0, false
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return 0, 0, 0, false
			}
			n[i] = n[i]*10 + int(r-'0')
		}
	}
	if n[0] != 2 && n[0] != 4 && n[0] != 5 {
		return 0, 0, 0, false
	}
	return n[0], n[1], n[2], true
}

// compose writes the message from the header sender from: headers, a text
// part and the attachments in base64, lines of 76 characters, CRLF line
// ends. m.ReplyTo holds addresses as the session writes them
// (replyAddresses).
func (s SMTP) compose(m Message, from string) ([]byte, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := []string{
		"From: " + from,
		"To: " + strings.Join(m.To, ", "),
	}
	if len(m.ReplyTo) > 0 {
		h = append(h, "Reply-To: "+strings.Join(m.ReplyTo, ", "))
	}
	h = append(h,
		"Subject: "+encodeText(headerText(m.Subject)),
		"Date: "+time.Now().Format(time.RFC1123Z),
		"Message-ID: <"+m.MessageID+">",
		"MIME-Version: 1.0",
		`Content-Type: multipart/mixed; boundary="`+mw.Boundary()+`"`,
	)
	var head bytes.Buffer
	for _, l := range h {
		head.WriteString(fold(l) + "\r\n")
	}
	head.WriteString("\r\n")
	text, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {"text/plain; charset=utf-8"},
		"Content-Transfer-Encoding": {"base64"},
	})
	if err != nil {
		return nil, err
	}
	if err := writeBase64(text, []byte(m.Text)); err != nil {
		return nil, err
	}
	for _, a := range m.Attachments {
		p, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {mime.FormatMediaType(a.ContentType, map[string]string{"name": a.Name})},
			"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": a.Name})},
			"Content-Transfer-Encoding": {"base64"},
		})
		if err != nil {
			return nil, err
		}
		if err := writeBase64(p, a.Data); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return append(head.Bytes(), b.Bytes()...), nil
}

// Why an address cannot be named to a mail server that does not offer
// SMTPUTF8, recorded as the recipient's refusal (never with the address's
// own text beyond what the record already holds).
const (
	reasonLocalPart = "not sent: the part before @ has characters outside ASCII and the mail server does not offer SMTPUTF8 (RFC 6531), so the address cannot be written for it; give an ASCII address or use a mail server that offers SMTPUTF8"
	reasonDomain    = "not sent: the domain is not a valid internationalized domain name (IDNA), so it cannot be written in ASCII for a mail server without SMTPUTF8"
	reasonAddress   = "not sent: not an e-mail address"
)

// envelopeAddress returns addr as a session names it (MAIL FROM, RCPT TO
// and the headers): unchanged when it is ASCII or the server offers
// SMTPUTF8 (utf8OK); otherwise with its domain in ASCII (IDNA, punycode:
// ñandú.cr is xn--and-6ma2c.cr, the same domain). An address whose part
// before @ is not ASCII has no ASCII form: it comes back "" with the
// reason (reasonLocalPart), as one whose domain IDNA refuses.
func envelopeAddress(addr string, utf8OK bool) (string, string) {
	if utf8OK || isASCII(addr) {
		return addr, ""
	}
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 {
		return "", reasonAddress
	}
	local, domain := addr[:at], addr[at+1:]
	if !isASCII(local) {
		return "", reasonLocalPart
	}
	d, err := idna.Lookup.ToASCII(domain)
	if err != nil || !isASCII(d) {
		return "", reasonDomain
	}
	return local + "@" + d, ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func writeBase64(w interface{ Write([]byte) (int, error) }, data []byte) error {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 0 {
		n := min(76, len(enc))
		if _, err := w.Write([]byte(enc[:n] + "\r\n")); err != nil {
			return err
		}
		enc = enc[n:]
	}
	return nil
}

// headerText makes s fit for a header's text: every control character
// (CR and LF among them, and the Unicode line and paragraph separators)
// and every run of spaces becomes one space, trimmed at both ends, and
// invalid UTF-8 is replaced. The header's encoding (RFC 2047) does the
// rest: quotes, accents and ñ are written as encoded words, so that no
// company's name can end the header or add one.
func headerText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// encodeText writes a header's text (RFC 2047): as it is when it is
// printable ASCII, in Q encoded words when it has other characters, and in
// B encoded words, of at most 45 bytes of text each and whole characters,
// when it holds "=?", which a reader would otherwise take for the start of
// an encoded word and decode.
func encodeText(s string) string {
	if !strings.Contains(s, "=?") {
		return mime.QEncoding.Encode("utf-8", s)
	}
	var words []string
	for len(s) > 0 {
		n := min(45, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// replyAddresses returns the Reply-To addresses as the session writes
// them: each a single address with no display name (net/mail parses it so,
// which refuses line breaks and any second address), in ASCII unless the
// server offers SMTPUTF8 (envelopeAddress), at most the first four,
// duplicates once. The others are left out: a reply then reaches the ones
// that remain.
func replyAddresses(addrs []string, utf8OK bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, raw := range addrs {
		a, err := mail.ParseAddress(strings.TrimSpace(raw))
		if err != nil || a.Name != "" || len(out) == 4 {
			continue
		}
		addr, why := envelopeAddress(a.Address, utf8OK)
		if why != "" || seen[strings.ToLower(addr)] {
			continue
		}
		seen[strings.ToLower(addr)] = true
		out = append(out, (&mail.Address{Address: addr}).String())
	}
	return out
}

// fold folds a header line longer than 76 characters at its spaces (RFC
// 5322 2.2.3): the break goes before a space, which the reader keeps as
// the one space the line had there. The spaces fold at are those between
// words or encoded words, never inside an encoded word (which has none).
// A word longer than a line stays whole.
func fold(line string) string {
	const limit = 76
	if len(line) <= limit {
		return line
	}
	var b strings.Builder
	n := 0 // the current line's length
	for i, w := range strings.Split(line, " ") {
		if i > 0 {
			if n+1+len(w) > limit && n > 0 {
				b.WriteString("\r\n")
				n = 0
			}
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
