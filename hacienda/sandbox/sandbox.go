package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time. Tests share a ManualClock between the sandbox and
// the client to expire tokens and finish processing without waiting.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told to. It is safe for
// concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock stopped at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Default paths and identities: the realm and client id are the tax
// authority's test environment's, the path the annex's (see BasePath).
const (
	DefaultBasePath = "/recepcion-sandbox/v1"
	DefaultRealm    = "rut-stag"
	DefaultClientID = "api-stag"
)

// Options configures a Sandbox. Zero values get the defaults named on each
// field.
type Options struct {
	// BasePath is the reception API's base path; the resources are
	// BasePath+"/recepcion" and BasePath+"/recepcion/{clave}". Default
	// "/recepcion-sandbox/v1", the annex's test path (the tax authority's
	// test environment serves /recepcion/v1 on its own host); clients are
	// always given the whole base URL, so only that URL matters.
	BasePath string
	// Realm is the token service's realm: the token endpoint is
	// /auth/realms/{Realm}/protocol/openid-connect/token. Default "rut-stag".
	Realm string
	// ClientID is the OAuth2 client id the token service accepts. Default
	// "api-stag".
	ClientID string
	// AccessTokenLifetime defaults to 300 s and RefreshTokenLifetime (the
	// session's maximum) to 36 000 s, the documented values.
	AccessTokenLifetime  time.Duration
	RefreshTokenLifetime time.Duration

	// Users are the accepted user names and passwords. When no user is
	// registered (here or through AddUser / POST /_sandbox/users), any
	// user name shaped like the environment's (cpj-3-101-123456@stag.
	// comprobanteselectronicos.go.cr for the staging realm) logs in with
	// any non-empty password: the embedded default.
	Users map[string]string

	// ProcessingDelay is how long a received document takes to get its
	// verdict: recibido during the first half, procesando during the
	// second, then aceptado or rechazado. Zero gives the verdict at once
	// (the library's default, for tests); the commands default to
	// DefaultProcessingDelay. SetProcessingDelay and PUT
	// /_sandbox/processing-delay change it while running.
	ProcessingDelay time.Duration

	// FechaAhead and FechaBehind bound a document's FechaEmision against
	// its reception, as the tax authority does (spec §4 FechaEmision,
	// §10.16, §17 item 12): later than reception by more than FechaAhead
	// (clock difference), or earlier by more than FechaBehind with
	// situación 1 or 2, the document is rechazado; situación 3 (sin
	// internet) may be earlier without bound. Zero means 5 minutes and 1
	// hour; negative turns the bound off.
	FechaAhead, FechaBehind time.Duration

	// Checks judge a received document. Nil means DefaultChecks().
	Checks *Checks
	// AnswerSigner signs the MensajeHacienda answers. Nil means
	// DefaultAnswerSigner(), a certificate minted at start.
	AnswerSigner AnswerSigner

	// Faults are the faults injected from the start.
	Faults Faults
	// Seed seeds the random choices of the faults (which call fails, which
	// document is dropped). The same seed and the same sequence of calls
	// give the same faults.
	Seed uint64
	// AdminToken, when set, is required as "Authorization: Bearer <token>"
	// on the /_sandbox/ endpoints.
	AdminToken string
	// MaxDocuments bounds the documents kept; the oldest are forgotten
	// first (the real sandbox is wiped now and then too). Default 200,000.
	MaxDocuments int
	// MaxCallTimes bounds the call times kept per user in the call record
	// (Calls, GET /_sandbox/calls): the latest are kept. MaxCallUsers
	// bounds the users recorded; the calls of users past it are only
	// counted. Defaults DefaultMaxCallTimes and DefaultMaxCallUsers.
	MaxCallTimes int
	MaxCallUsers int

	// RegistryChecks makes the judging step check a document against the
	// simulated registries (registry_data.go, docs/sandbox-registry.md),
	// as the tax authority does: an FE's receptor with a national
	// identification must be registered, every line's CAByS code in the
	// catalog in force, every exoneration of type 04 or 11 an
	// authorisation of the receptor's, in force at FechaEmision, covering
	// the line's CAByS code, with TarifaExonerada within its percentage.
	// Off by default, so that tests that issue to arbitrary data are not
	// judged on it; the service's built-in sandbox turns it on.
	RegistryChecks bool
	// RegistryLimit is the registry endpoints' rate limit per client
	// address (RealRegistryLimit is the tax authority's); the zero value
	// limits nothing.
	RegistryLimit RegistryLimit

	// Store keeps the documents received and their verdicts, so that a
	// sandbox started again on it knows them (sqlitestate.Open gives one
	// on a file). Nil keeps them in memory only. New loads what it keeps;
	// the caller closes it after the Sandbox.
	Store Store

	// Clock defaults to the system clock.
	Clock Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Sandbox is the simulated tax authority. It is safe for concurrent use.
type Sandbox struct {
	opts    Options
	checks  Checks
	signer  AnswerSigner
	clock   Clock
	log     *slog.Logger
	handler http.Handler

	tokenPath, logoutPath string

	faultMu sync.Mutex
	faults  Faults
	rng     *rand.Rand

	idp *idp

	// refMu guards the documents' credited amounts while a note's
	// references are judged.
	refMu sync.Mutex

	calls *callLog

	limits        *limiter // nil: the registry is not rate limited
	registryStats registryCounters

	docMu sync.RWMutex
	docs  map[string]*document
	// replies maps a received document's clave and a receiver's
	// identification (replyKey) to the key of that receiver's message
	// about it: one message per document and receiver.
	replies map[string]string
	order   []string // keys in arrival order, for Received and eviction
	// overflow are the keys a Store keeps that the memory no longer does
	// (past MaxDocuments at start, or evicted by a receipt the Store could
	// not keep), forgotten with the next receipt.
	overflow []string

	stats   counters
	delay   atomic.Int64 // the processing delay, in nanoseconds
	closing chan struct{}
	closed  atomic.Bool
}

// New checks the options and returns a Sandbox.
func New(o Options) (*Sandbox, error) {
	if o.BasePath == "" {
		o.BasePath = DefaultBasePath
	}
	if !strings.HasPrefix(o.BasePath, "/") {
		return nil, fmt.Errorf("sandbox: base path %q must start with /", o.BasePath)
	}
	o.BasePath = strings.TrimRight(o.BasePath, "/")
	if o.Realm == "" {
		o.Realm = DefaultRealm
	}
	if strings.ContainsAny(o.Realm, "/{}") {
		return nil, fmt.Errorf("sandbox: realm %q", o.Realm)
	}
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.AccessTokenLifetime == 0 {
		o.AccessTokenLifetime = 300 * time.Second
	}
	if o.RefreshTokenLifetime == 0 {
		o.RefreshTokenLifetime = 36000 * time.Second
	}
	if o.AccessTokenLifetime < time.Second || o.RefreshTokenLifetime < time.Second {
		return nil, errors.New("sandbox: token lifetimes must be at least one second")
	}
	if o.ProcessingDelay < 0 {
		return nil, errors.New("sandbox: negative processing delay")
	}
	if o.FechaAhead == 0 {
		o.FechaAhead = 5 * time.Minute
	}
	if o.FechaBehind == 0 {
		o.FechaBehind = time.Hour
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = 200_000
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := o.Faults.validate(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := o.RegistryLimit.validate(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s := &Sandbox{
		opts:       o,
		clock:      o.Clock,
		log:        o.Logger.With("component", "hacienda-sandbox"),
		tokenPath:  "/auth/realms/" + o.Realm + "/protocol/openid-connect/token",
		logoutPath: "/auth/realms/" + o.Realm + "/protocol/openid-connect/logout",
		faults:     o.Faults.clone(),
		rng:        rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		docs:       map[string]*document{},
		replies:    map[string]string{},
		calls:      newCallLog(o.MaxCallTimes, o.MaxCallUsers),
		closing:    make(chan struct{}),
	}
	if o.Checks != nil {
		s.checks = *o.Checks
	} else {
		s.checks = DefaultChecks()
	}
	s.signer = o.AnswerSigner
	if s.signer == nil {
		var err error
		if s.signer, err = DefaultAnswerSigner(); err != nil {
			return nil, fmt.Errorf("sandbox: answer signer: %w", err)
		}
	}
	if o.RegistryLimit.on() {
		s.limits = &limiter{l: o.RegistryLimit, ips: map[string]*ipCalls{}}
	}
	s.delay.Store(int64(o.ProcessingDelay))
	s.idp = newIDP(s, o.Users)
	s.handler = s.routes()
	if o.Store != nil {
		if err := s.load(context.Background()); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Handler serves the token service, the reception API and the /_sandbox/
// administration endpoints.
func (s *Sandbox) Handler() http.Handler { return s.handler }

// TokenPath is the path of the token endpoint.
func (s *Sandbox) TokenPath() string { return s.tokenPath }

// BasePath is the path of the reception API's base.
func (s *Sandbox) BasePath() string { return s.opts.BasePath }

// Close releases the handlers that hold connections open (the "hang" drop
// mode, added latency). The Sandbox answers nothing afterwards.
func (s *Sandbox) Close() {
	if s.closed.CompareAndSwap(false, true) {
		close(s.closing)
	}
}

// DefaultProcessingDelay is the processing delay of the sandbox the
// commands run: long enough that recibido and procesando are seen, as they
// are at the tax authority, short enough for a first try by hand.
const DefaultProcessingDelay = 2 * time.Second

// ProcessingDelay returns the current processing delay.
func (s *Sandbox) ProcessingDelay() time.Duration { return time.Duration(s.delay.Load()) }

// SetProcessingDelay changes the processing delay of the documents judged
// from now on (zero for benchmarks: verdicts at once).
func (s *Sandbox) SetProcessingDelay(d time.Duration) error {
	if d < 0 {
		return errors.New("sandbox: negative processing delay")
	}
	s.delay.Store(int64(d))
	return nil
}

// AddUser registers a user name and password for the token service. Once a
// user is registered, only registered users log in.
func (s *Sandbox) AddUser(username, password string) { s.idp.addUser(username, password) }

// RevokeTokens ends every session: the next API call with an old token gets
// 401, and old refresh tokens are refused.
func (s *Sandbox) RevokeTokens() { s.idp.revokeAll() }

// Stats counts what the sandbox has done.
type Stats struct {
	PasswordGrants int64 `json:"passwordGrants"`
	RefreshGrants  int64 `json:"refreshGrants"`
	TokenRefused   int64 `json:"tokenRefused"` // bad credentials, expired refresh tokens, injected refusals
	Logouts        int64 `json:"logouts"`
	Submissions    int64 `json:"submissions"` // documents received (202, or recorded then dropped)
	Duplicates     int64 `json:"duplicates"`
	BadRequests    int64 `json:"badRequests"` // 400 at reception, duplicates included
	Unauthorized   int64 `json:"unauthorized"`
	StatusQueries  int64 `json:"statusQueries"`
	NotFound       int64 `json:"notFound"`
	Accepted       int64 `json:"accepted"`
	Rejected       int64 `json:"rejected"`
	InjectedErrors int64 `json:"injectedErrors"`
	Dropped        int64 `json:"dropped"`
	OutageCuts     int64 `json:"outageCuts"`
	Callbacks      int64 `json:"callbacks"`     // callback POSTs answered 200
	CallbackFails  int64 `json:"callbackFails"` // callback POSTs that failed (each retry counted)
	// CallbacksDropped counts the callbacks never posted (CallbackDropRate).
	CallbacksDropped int64 `json:"callbacksDropped"`
	// RegistryCalls counts the calls of each registry endpoint, by the
	// names RegistryTaxpayers, RegistryCabys... (every call that arrived,
	// answered or not); RegistryBlocked those answered 429 by the rate
	// limit.
	RegistryCalls   map[string]int64 `json:"registryCalls"`
	RegistryBlocked int64            `json:"registryBlocked"`
}

type counters struct {
	passwordGrants, refreshGrants, tokenRefused, logouts        atomic.Int64
	submissions, duplicates, badRequests, unauthorized          atomic.Int64
	statusQueries, notFound, accepted, rejected, injectedErrors atomic.Int64
	dropped, outageCuts, callbacks, callbackFails               atomic.Int64
	callbacksDropped                                            atomic.Int64
}

// Stats returns the counters.
func (s *Sandbox) Stats() Stats {
	c := &s.stats
	return Stats{
		PasswordGrants:   c.passwordGrants.Load(),
		RefreshGrants:    c.refreshGrants.Load(),
		TokenRefused:     c.tokenRefused.Load(),
		Logouts:          c.logouts.Load(),
		Submissions:      c.submissions.Load(),
		Duplicates:       c.duplicates.Load(),
		BadRequests:      c.badRequests.Load(),
		Unauthorized:     c.unauthorized.Load(),
		StatusQueries:    c.statusQueries.Load(),
		NotFound:         c.notFound.Load(),
		Accepted:         c.accepted.Load(),
		Rejected:         c.rejected.Load(),
		InjectedErrors:   c.injectedErrors.Load(),
		Dropped:          c.dropped.Load(),
		OutageCuts:       c.outageCuts.Load(),
		Callbacks:        c.callbacks.Load(),
		CallbackFails:    c.callbackFails.Load(),
		CallbacksDropped: c.callbacksDropped.Load(),

		RegistryCalls:   s.registryStats.snapshot(),
		RegistryBlocked: s.registryStats.blocked.Load(),
	}
}

// sleep waits d, or less if the request or the sandbox ends first.
func (s *Sandbox) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.closing:
	}
}
