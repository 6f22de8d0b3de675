package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/hacienda"
	"facturad/tenant"
)

// EmailStore is the outbox of e-mails and the documents they carry
// (tenant.EmailStore and tenant.DocumentStore; both store adapters
// satisfy it).
type EmailStore interface {
	ClaimDueEmails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.EmailDelivery, error)
	RecordEmail(ctx context.Context, id int64, r tenant.EmailResult) error
	EmailBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
	DocumentByClave(ctx context.Context, clave string) (tenant.Document, error)
}

// PDFRenderer renders a document's printed representation (the PDF of
// GET /api/documents/{clave}/pdf/v4). Optional: without one the e-mail
// carries the two XMLs only. x is d's signed XML as the mailer read it
// for the text, so that it is read once an e-mail.
type PDFRenderer interface {
	DocumentPDF(ctx context.Context, d tenant.Document, x *hacienda.Document) ([]byte, error)
}

// ServiceFaultText is an e-mail's ultimoError while the mail server
// cannot be used (SendError.Service): a fixed text, since every company
// reads it and the server's address and replies are the operator's.
const ServiceFaultText = "the mail server cannot be used just now; retried"

// Sender sends one message (SMTP satisfies it).
type Sender interface {
	Send(ctx context.Context, m Message) (SendResult, error)
}

// The e-mails' defaults: DefaultEmailWorkers sent at once, the first retry
// DefaultEmailBackoff after a failure.
const (
	DefaultEmailWorkers = 4
	DefaultEmailBackoff = 30 * time.Second
)

// MailerOptions configure NewMailer. Store and Sender are required.
type MailerOptions struct {
	Store  EmailStore
	Sender Sender
	PDF    PDFRenderer
	// Sandbox says the service's tax authority is the sandbox: every
	// document's e-mail is marked as a test without tax value, as one
	// numbered in the pruebas environment is.
	Sandbox bool
	// Workers is how many e-mails are sent at once (default
	// DefaultEmailWorkers).
	Workers int
	// Lease is how long a claimed e-mail is held from other replicas
	// (default 5m: above the SMTP session's own timeout).
	Lease        time.Duration
	PollInterval time.Duration
	MaxAge       time.Duration
	BackoffBase  time.Duration
	BackoffMax   time.Duration
	Logger       *slog.Logger
	Registerer   prometheus.Registerer
	Clock        func() time.Time
}

// Mailer sends the outbox's e-mails: an accepted document's signed XML,
// the tax authority's answer and its PDF to the receptor's addresses, and
// the tenant events' notices to their companies' notice addresses.
type Mailer struct {
	*worker[tenant.EmailDelivery]
	o MailerOptions

	// fault is the mail server's fault as last seen ("auth 535", "rcpt
	// 554", "" when the last session met none), so that a server that cannot
	// be used is logged once when that starts and once when it ends, not
	// once per e-mail.
	faultMu sync.Mutex
	fault   string
}

// NewMailer checks the options and returns a Mailer.
func NewMailer(o MailerOptions) (*Mailer, error) {
	if o.Store == nil || o.Sender == nil {
		return nil, errors.New("delivery: MailerOptions.Store and Sender are required")
	}
	setDefault(&o.Workers, DefaultEmailWorkers)
	setDefault(&o.Lease, 5*time.Minute)
	setDefault(&o.PollInterval, DefaultPollInterval)
	setDefault(&o.MaxAge, DefaultMaxAge)
	setDefault(&o.BackoffBase, DefaultEmailBackoff)
	setDefault(&o.BackoffMax, DefaultBackoffMax)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	ml := &Mailer{o: o}
	ml.worker = &worker[tenant.EmailDelivery]{
		name: "mailer", kind: "email", noun: "e-mail",
		workers: o.Workers, poll: o.PollInterval, clock: o.Clock,
		log: o.Logger.With("component", "email"), metrics: m,
		claim: func(ctx context.Context, now time.Time, n int) ([]tenant.EmailDelivery, error) {
			return o.Store.ClaimDueEmails(ctx, now, now.Add(o.Lease), n)
		},
		serve:   ml.send,
		backlog: o.Store.EmailBacklog,
	}
	return ml, nil
}

// Start runs the mailer until Stop.
func (m *Mailer) Start(ctx context.Context) error { return m.start(ctx) }

// Stop interrupts the sessions in flight and waits for them, or for ctx.
// An e-mail whose session was cut short is sent again after its lease (at
// least once).
func (m *Mailer) Stop(ctx context.Context) error { return m.stop(ctx) }

// send sends one e-mail and records the outcome.
func (m *Mailer) send(e tenant.EmailDelivery) {
	log := m.log.With("company", e.CompanyID, "clave", e.Clave, "email", e.ID)
	if e.Evento != "" {
		log = m.log.With("company", e.CompanyID, "evento", e.Evento, "email", e.ID)
	}
	start := time.Now()
	res, err := m.attempt(e)
	m.metrics.duration.WithLabelValues("email").Observe(time.Since(start).Seconds())
	now := m.o.Clock()
	r := tenant.EmailResult{At: now, Rejected: res.Rejected}
	outcome := "delivered"
	var se *SendError
	errors.As(err, &se)
	if err != nil {
		r.Error = truncate(err.Error(), 500)
		if se != nil && se.Service {
			// Every company reads ultimoError: the platform's mail server
			// (its address, its replies) is the operator's, said in the
			// warning of serverState only.
			r.Error = ServiceFaultText
		}
		switch {
		case se != nil && se.Permanent:
			outcome = "failed"
			log.Warn("an e-mail was refused for good", "err", r.Error)
		case now.Sub(e.Created) >= m.o.MaxAge:
			outcome = "failed"
			log.Warn("an e-mail could not be sent in time", "attempts", e.Attempts+1, "err", err.Error())
		default:
			outcome = "retry"
			r.Next = now.Add(backoff(m.o.BackoffBase, m.o.BackoffMax, e.Attempts))
			if se != nil && se.Service {
				// Said once by serverState; every e-mail meets it alike.
				log.Debug("an e-mail waits for the mail server", "err", err.Error())
			} else {
				log.Info("an e-mail will be tried again", "err", r.Error)
			}
		}
	}
	m.serverState(err, se)
	if len(res.Rejected) > 0 {
		log.Warn("recipients were refused, by the mail server or as not sendable through it", "rejected", len(res.Rejected))
	}
	m.metrics.attempts.WithLabelValues("email", outcome).Inc()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 10*time.Second)
	defer cancel()
	if err := m.o.Store.RecordEmail(ctx, e.ID, r); err != nil {
		log.Warn("record an e-mail attempt", "err", err)
	}
}

// serverState logs the mail server's changes of state: at warn when a
// session fails for the service's sake (connection, TLS, AUTH, MAIL FROM,
// or a relaying refusal at RCPT or DATA: the server or the configuration,
// e-mails wait), again when that
// fault changes, and at info when a session gets past it again. Failures
// that say nothing of the server (the document, the PDF) change nothing.
// se is err's *SendError, nil when it has none.
func (m *Mailer) serverState(err error, se *SendError) {
	if err != nil && (se == nil || se.Stage == "document" || se.Stage == "pdf" || se.Stage == "notice") {
		return
	}
	fault := ""
	if se != nil && se.Service {
		fault = se.Stage
		if se.Code != 0 {
			fault += " " + strconv.Itoa(se.Code)
		}
	}
	m.faultMu.Lock()
	was := m.fault
	m.fault = fault
	m.faultMu.Unlock()
	switch {
	case fault == was:
	case fault != "":
		m.log.Warn("the mail server cannot be used; e-mails wait and are tried again with backoff (smtp_url, smtp_from)", "smtp", m.server(), "err", err.Error())
	default:
		m.log.Info("the mail server takes e-mails again", "smtp", m.server(), "was", was)
	}
}

// server is the mail server as its String shows it, without the password
// (never the value itself: a JSON log would print its fields).
func (m *Mailer) server() string {
	if st, ok := m.o.Sender.(fmt.Stringer); ok {
		return st.String()
	}
	return ""
}

// attempt builds the message, from the stored document or from the
// notice's data, and sends it.
func (m *Mailer) attempt(e tenant.EmailDelivery) (SendResult, error) {
	ctx := m.ctx
	if e.Evento != "" {
		msg, err := noticeMessage(e)
		if err != nil {
			return SendResult{}, err
		}
		return m.o.Sender.Send(ctx, msg)
	}
	d, err := m.o.Store.DocumentByClave(ctx, e.Clave)
	if err != nil {
		if errors.Is(err, tenant.ErrNotFound) {
			return SendResult{}, &SendError{Permanent: true, Stage: "document", Msg: "the document is gone"}
		}
		return SendResult{}, &SendError{Stage: "document", Msg: "the document could not be read"}
	}
	msg, err := m.message(ctx, e, d)
	if err != nil {
		return SendResult{}, err
	}
	return m.o.Sender.Send(ctx, msg)
}

// message is the e-mail of an accepted document (documentMessage), with
// its attachments. Its text is read from the signed XML: a document whose
// XML cannot be read fails for good, since every attempt would read the
// same bytes.
func (m *Mailer) message(ctx context.Context, e tenant.EmailDelivery, d tenant.Document) (Message, error) {
	if len(d.SignedXML) == 0 {
		return Message{}, &SendError{Permanent: true, Stage: "document", Msg: "the document has no signed XML"}
	}
	x, err := hacienda.ParseXML(d.SignedXML)
	if err != nil {
		return Message{}, &SendError{Permanent: true, Stage: "document", Msg: "the document's signed XML cannot be read: " + truncate(err.Error(), 200)}
	}
	name := d.Clave
	msg := documentMessage(e, d, mailDoc{x: x, test: m.o.Sandbox || d.Ambiente == tenant.AmbientePruebas, pdf: m.o.PDF != nil})
	msg.Attachments = []Attachment{{Name: name + ".xml", ContentType: "application/xml", Data: d.SignedXML}}
	if len(d.ResponseXML) > 0 {
		msg.Attachments = append(msg.Attachments, Attachment{Name: name + "-respuesta.xml", ContentType: "application/xml", Data: d.ResponseXML})
	}
	if m.o.PDF != nil {
		pdf, err := m.o.PDF.DocumentPDF(ctx, d, x)
		if err != nil {
			return Message{}, &SendError{Stage: "pdf", Msg: "the PDF could not be rendered: " + truncate(err.Error(), 200)}
		}
		msg.Attachments = append(msg.Attachments, Attachment{Name: name + ".pdf", ContentType: "application/pdf", Data: pdf})
	}
	return msg, nil
}
