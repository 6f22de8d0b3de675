package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/hacienda/api"
	sharedmetrics "facturad/metrics"
	"facturad/tenant"
)

// Store is the outbox of webhook deliveries (tenant.WebhookStore; both
// store adapters satisfy it).
type Store interface {
	ClaimEndpoints(ctx context.Context, holder string, now, leaseUntil time.Time, limit int) ([]tenant.Endpoint, error)
	RenewEndpoint(ctx context.Context, holder string, webhookID int64, leaseUntil time.Time) (bool, error)
	ReleaseEndpoint(ctx context.Context, holder string, webhookID int64, now time.Time) error
	DueDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]tenant.Delivery, error)
	RecordAttempt(ctx context.Context, deliveryID int64, r tenant.AttemptResult) error
	DeliveryBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
	PurgeDeliveries(ctx context.Context, before time.Time, limit int) (webhooks, emails int, err error)
}

// Secrets opens a webhook's signing secret (tenant.Service satisfies it).
type Secrets interface {
	WebhookSecret(w tenant.Webhook) ([]byte, error)
}

// Defaults of Options.
const (
	DefaultWorkers        = 32
	DefaultPerEndpoint    = 4
	DefaultAttemptTimeout = 10 * time.Second
	DefaultLease          = time.Minute
	DefaultTurn           = 15 * time.Second
	DefaultPollInterval   = 500 * time.Millisecond
	DefaultMaxAge         = 72 * time.Hour
	DefaultBackoffBase    = 5 * time.Second
	DefaultBackoffMax     = 6 * time.Hour
	// DefaultRetention is how long a settled delivery or e-mail is kept
	// after its event; DefaultPurgeInterval how often, and
	// DefaultPurgeBatch how many rows of each kind at most, one replica
	// deletes those older.
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultPurgeInterval = time.Minute
	DefaultPurgeBatch    = 1000
)

// Options configure New. Store, Secrets and Holder are required.
type Options struct {
	Store   Store
	Secrets Secrets
	// Holder names this replica in the endpoint leases (unique per
	// process).
	Holder string
	// Policy decides which addresses may be called.
	Policy URLPolicy

	// Workers is how many webhooks this replica serves at once (default
	// 32); PerEndpoint how many attempts run against one webhook at once
	// over every replica (default 4).
	Workers     int
	PerEndpoint int
	// AttemptTimeout bounds one attempt, connection included (default
	// 10s).
	AttemptTimeout time.Duration
	// Lease is how long a claimed webhook is held from other replicas
	// (default 1m, renewed while in work); Turn how long one claim
	// serves a webhook before it goes to the back of the line (default
	// 15s), so that a webhook with a long backlog does not keep a worker
	// from the others.
	Lease time.Duration
	Turn  time.Duration
	// PollInterval is how often the outbox is asked for due work when
	// the last claim found none (default 500ms).
	PollInterval time.Duration
	// MaxAge is how long after its event a delivery is retried (default
	// 72h); BackoffBase and BackoffMax shape the waits between attempts
	// (default 5s doubling up to 6h, less a random part of up to half).
	MaxAge      time.Duration
	BackoffBase time.Duration
	BackoffMax  time.Duration

	// Retention is how long after its event a settled (delivered or
	// failed) webhook delivery or e-mail is kept (default 30 days;
	// negative: kept for ever). Every PurgeInterval (default 1m) the
	// deliverer deletes up to PurgeBatch (default 1000) of each kind
	// older than that, the oldest first, and comes back after a second
	// while it finds full batches.
	Retention     time.Duration
	PurgeInterval time.Duration
	PurgeBatch    int

	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Clock defaults to time.Now.
	Clock func() time.Time
	// Transport overrides the HTTP transport (tests); its dialer must
	// apply Policy.Control itself.
	Transport http.RoundTripper
}

// Deliverer posts the outbox's webhook deliveries. Start it once; Stop
// waits for the attempts in flight.
type Deliverer struct {
	*worker[tenant.Endpoint]
	o      Options
	client *http.Client
	health *endpointHealth
}

// New checks the options and returns a Deliverer.
func New(o Options) (*Deliverer, error) {
	if o.Store == nil || o.Secrets == nil || o.Holder == "" {
		return nil, errors.New("delivery: Options.Store, Secrets and Holder are required")
	}
	setDefault(&o.Workers, DefaultWorkers)
	setDefault(&o.PerEndpoint, DefaultPerEndpoint)
	setDefault(&o.AttemptTimeout, DefaultAttemptTimeout)
	setDefault(&o.Lease, DefaultLease)
	setDefault(&o.Turn, DefaultTurn)
	setDefault(&o.PollInterval, DefaultPollInterval)
	setDefault(&o.MaxAge, DefaultMaxAge)
	setDefault(&o.BackoffBase, DefaultBackoffBase)
	setDefault(&o.BackoffMax, DefaultBackoffMax)
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	setDefault(&o.PurgeInterval, DefaultPurgeInterval)
	setDefault(&o.PurgeBatch, DefaultPurgeBatch)
	if o.Lease < 2*o.AttemptTimeout {
		o.Lease = 2 * o.AttemptTimeout
	}
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
	tr := o.Transport
	if tr == nil {
		dialer := &net.Dialer{Timeout: o.AttemptTimeout, Control: o.Policy.Control, Resolver: o.Policy.Resolver}
		tr = &http.Transport{
			Proxy:                 nil, // a proxy would connect for us, past the address check
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   o.AttemptTimeout,
			ResponseHeaderTimeout: o.AttemptTimeout,
			MaxConnsPerHost:       o.PerEndpoint,
			MaxIdleConnsPerHost:   o.PerEndpoint,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	health := newEndpointHealth(DefaultHealthWindow, o.Clock)
	if o.Registerer != nil {
		// A second deliverer on one registry shares the first's view, the
		// one exported.
		var err error
		if health, err = sharedmetrics.Register(o.Registerer, health); err != nil {
			return nil, err
		}
	}
	d := &Deliverer{
		o:      o,
		health: health,
		client: &http.Client{
			Transport: tr,
			Timeout:   o.AttemptTimeout,
			// A redirect is an answer like any other non-2xx: following it
			// would call an address nobody registered.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	d.worker = &worker[tenant.Endpoint]{
		name: "deliverer", kind: "webhook", noun: "webhook",
		workers: o.Workers, poll: o.PollInterval, clock: o.Clock,
		log: o.Logger.With("component", "webhooks"), metrics: m,
		claim: func(ctx context.Context, now time.Time, n int) ([]tenant.Endpoint, error) {
			return o.Store.ClaimEndpoints(ctx, o.Holder, now, now.Add(o.Lease), n)
		},
		serve:   d.serve,
		backlog: o.Store.DeliveryBacklog,
	}
	if o.Retention > 0 {
		d.worker.prune, d.worker.pruneEvery = d.purge, o.PurgeInterval
	}
	return d, nil
}

// purge deletes one batch of each kind of settled outbox rows past the
// retention, and reports whether a batch was full (more are waiting).
func (d *Deliverer) purge(ctx context.Context) bool {
	hooks, emails, err := d.o.Store.PurgeDeliveries(ctx, d.o.Clock().Add(-d.o.Retention), d.o.PurgeBatch)
	d.metrics.purged.WithLabelValues("webhook").Add(float64(hooks))
	d.metrics.purged.WithLabelValues("email").Add(float64(emails))
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("delete deliveries past the retention", "err", err)
		}
		return false
	}
	if hooks+emails > 0 {
		d.log.Debug("deleted deliveries past the retention", "webhooks", hooks, "emails", emails)
	}
	return hooks == d.o.PurgeBatch || emails == d.o.PurgeBatch
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Start runs the deliverer until Stop.
func (d *Deliverer) Start(ctx context.Context) error { return d.start(ctx) }

// Stop stops claiming, interrupts the attempts in flight and waits for
// them to be recorded or given up (an attempt cut short is delivered again
// later: at least once), or for ctx.
func (d *Deliverer) Stop(ctx context.Context) error { return d.stop(ctx) }

// serve attempts a claimed webhook's due deliveries, PerEndpoint at once,
// for one Turn, renewing its lease between rounds; then it releases the
// webhook to the back of the line.
func (d *Deliverer) serve(ep tenant.Endpoint) {
	log := d.log.With("webhook", ep.ID, "company", ep.CompanyID)
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), 5*time.Second)
		defer cancel()
		if err := d.o.Store.ReleaseEndpoint(ctx, d.o.Holder, ep.ID, d.o.Clock()); err != nil {
			log.Warn("release a webhook", "err", err)
		}
	}()
	secret, err := d.o.Secrets.WebhookSecret(ep.Webhook)
	if err != nil {
		log.Error("open a webhook's secret; its deliveries wait", "err", err)
		return
	}
	defer clear(secret)
	end := d.o.Clock().Add(d.o.Turn)
	for d.ctx.Err() == nil && d.o.Clock().Before(end) {
		due, err := d.o.Store.DueDeliveries(d.ctx, ep.ID, d.o.Clock(), 2*d.o.PerEndpoint)
		if err != nil {
			if d.ctx.Err() == nil {
				log.Warn("read due deliveries", "err", err)
			}
			return
		}
		if len(due) == 0 {
			return
		}
		sem := make(chan struct{}, d.o.PerEndpoint)
		var wg sync.WaitGroup
		for _, dl := range due {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				d.attempt(ep, secret, dl, log)
			}()
		}
		wg.Wait()
		ok, err := d.o.Store.RenewEndpoint(d.ctx, d.o.Holder, ep.ID, d.o.Clock().Add(d.o.Lease))
		if err != nil || !ok {
			if d.ctx.Err() == nil {
				log.Warn("the webhook's lease was lost; another replica goes on", "err", err)
			}
			return
		}
	}
}

// Body is the JSON a delivery posts (api.WebhookEvent):
// {"id","evento","creado","data"}.
func Body(dl tenant.Delivery) ([]byte, error) {
	return json.Marshal(api.WebhookEvent{ID: dl.EventID, Evento: dl.Evento, Creado: api.LocalTime(dl.Created), Data: dl.Payload})
}

// attempt posts one delivery and records its outcome.
func (d *Deliverer) attempt(ep tenant.Endpoint, secret []byte, dl tenant.Delivery, log *slog.Logger) {
	body, err := Body(dl)
	if err != nil {
		log.Error("encode a delivery", "delivery", dl.ID, "err", err)
		return
	}
	start := time.Now()
	status, reason := d.post(ep.URL, secret, body, dl.EventID, log.With("delivery", dl.ID))
	d.metrics.duration.WithLabelValues("webhook").Observe(time.Since(start).Seconds())
	now := d.o.Clock()
	r := tenant.AttemptResult{At: now, Status: status, Error: reason}
	outcome := "delivered"
	if reason != "" {
		if now.Sub(dl.Created) < d.o.MaxAge {
			r.Next = now.Add(backoff(d.o.BackoffBase, d.o.BackoffMax, dl.Attempts))
			outcome = "retry"
		} else {
			outcome = "failed"
			log.Warn("a webhook delivery failed for good", "delivery", dl.ID, "event", dl.EventID, "attempts", dl.Attempts+1, "err", reason)
		}
	}
	d.metrics.attempts.WithLabelValues("webhook", outcome).Inc()
	d.health.record(ep.ID, ep.CompanyID, reason != "")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), 10*time.Second)
	defer cancel()
	if err := d.o.Store.RecordAttempt(ctx, dl.ID, r); err != nil {
		// Not recorded: the delivery stays due and is sent again.
		log.Warn("record a delivery attempt", "delivery", dl.ID, "err", err)
	}
}

// post sends body signed to url and returns the answer's status and,
// unless it is 2xx, why the attempt failed (never the URL: it may hold a
// token in its query; for a failed connection a fixed text, transportError).
func (d *Deliverer) post(rawURL string, secret, body []byte, eventID string, log *slog.Logger) (int, string) {
	if u, err := url.Parse(rawURL); err != nil || !d.o.Policy.scheme(u.Scheme) {
		return 0, "the URL is not allowed any more (https only)"
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.o.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, "the URL cannot be called"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "facturad-webhooks/1")
	req.Header.Set("Facturad-Event-Id", eventID)
	req.Header.Set(SignatureHeader, Sign(secret, body, d.o.Clock()))
	resp, err := d.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		log.Debug("a webhook attempt got no answer", "err", err)
		return 0, d.transportError(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, "HTTP " + strconv.Itoa(resp.StatusCode)
}

// transportError is why an attempt got no HTTP answer, in a fixed text.
// The company reads it in its delivery log, so it never carries what Go's
// error does (the address the name resolved to, the resolver's address):
// a company that points its own name at an internal one could map the
// operator's network through it. The detail is logged at debug.
func (d *Deliverer) transportError(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	var record tls.RecordHeaderError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var ne net.Error
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		return "the host resolves to an address that is not public"
	case errors.As(err, &dnsErr):
		return "the host does not resolve"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("no answer within %s", d.o.AttemptTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid):
		return "the server's TLS certificate does not verify"
	case errors.As(err, &alert), errors.As(err, &record):
		return "the TLS handshake failed"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	}
	return "the request failed before an answer"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// backoff is base doubled n times, at most max, less a random part of up
// to half (jitter: deliveries that failed together do not come back
// together).
func backoff(base, maxWait time.Duration, n int) time.Duration {
	w := base
	for i := 0; i < n && w < maxWait; i++ {
		w *= 2
	}
	w = min(w, maxWait)
	if half := int64(w / 2); half > 0 {
		w -= time.Duration(rand.Int64N(half + 1))
	}
	return w
}
