package recepcion

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Environment names a tax-authority environment.
type Environment string

// The environments the service knows by name.
const (
	// Sandbox is the simulator built into the service (package
	// hacienda/sandbox). It has no public address: APIURL and TokenURL must
	// point at it.
	Sandbox Environment = "sandbox"
	// Staging is the tax authority's own test environment ("rut-stag").
	Staging Environment = "staging"
	// Production is the real thing ("rut").
	Production Environment = "production"
)

// Endpoints is where an environment's token service and reception API are.
type Endpoints struct {
	// TokenURL is the OpenID Connect token endpoint.
	TokenURL string
	// LogoutURL ends a session; empty when the environment has none.
	LogoutURL string
	// APIURL is the reception API's base URL, without a trailing slash;
	// {APIURL}/recepcion is the submission resource.
	APIURL string
	// ClientID is the OAuth2 client id of the environment.
	ClientID string
}

// The tax authority's endpoints (docs/design/hacienda-api.md, "Environments").
// Staging's reception API is api-sandbox…/recepcion/v1, as the Ministry's
// notice of 6 June 2022 and its support name it; the annex's
// api.comprobanteselectronicos.go.cr/recepcion-sandbox/v1 is the older address.
const (
	idpBase          = "https://idp.comprobanteselectronicos.go.cr/auth/realms/"
	oidcTokenPath    = "/protocol/openid-connect/token"
	oidcLogoutPath   = "/protocol/openid-connect/logout"
	stagingAPIURL    = "https://api-sandbox.comprobanteselectronicos.go.cr/recepcion/v1"
	productionAPIURL = "https://api.comprobanteselectronicos.go.cr/recepcion/v1"
)

// EnvironmentEndpoints returns the published endpoints of env. The sandbox
// has none (only its client id): it runs where the service runs.
func EnvironmentEndpoints(env Environment) (Endpoints, error) {
	switch env {
	case Sandbox:
		return Endpoints{ClientID: "api-stag"}, nil
	case Staging:
		return Endpoints{
			TokenURL:  idpBase + "rut-stag" + oidcTokenPath,
			LogoutURL: idpBase + "rut-stag" + oidcLogoutPath,
			APIURL:    stagingAPIURL,
			ClientID:  "api-stag",
		}, nil
	case Production:
		return Endpoints{
			TokenURL:  idpBase + "rut" + oidcTokenPath,
			LogoutURL: idpBase + "rut" + oidcLogoutPath,
			APIURL:    productionAPIURL,
			ClientID:  "api-prod",
		}, nil
	}
	return Endpoints{}, fmt.Errorf("unknown tax-authority environment %q (want sandbox, staging or production)", env)
}

// Clock tells the time; tests inject a clock they move by hand to expire
// tokens. Timeouts of HTTP calls always use the real time.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Options configures a Client. Zero values get the defaults named on each
// field.
type Options struct {
	// Environment defaults to Sandbox.
	Environment Environment
	// APIURL overrides the environment's reception-API base URL (an egress
	// proxy, or a sandbox running elsewhere). Required for Sandbox.
	APIURL string
	// TokenURL overrides the environment's token endpoint. Required for
	// Sandbox.
	TokenURL string
	// LogoutURL overrides the environment's logout endpoint. When TokenURL is
	// overridden and LogoutURL is not, it is derived from TokenURL (…/token
	// → …/logout).
	LogoutURL string
	// ClientID overrides the environment's OAuth2 client id.
	ClientID string
	// CallbackURL, when set, is sent as callbackUrl with every submission
	// that does not carry its own.
	CallbackURL string

	// HTTPClient makes the calls. Defaults to a client with dial, TLS and
	// response-header timeouts and a connection pool sized for many
	// concurrent calls. Its Timeout should be zero: Timeout below bounds
	// every call.
	HTTPClient *http.Client
	// Timeout bounds one HTTP exchange with the reception API (connect,
	// send, wait, read the answer). Default 20s.
	Timeout time.Duration
	// TokenTimeout bounds one exchange with the token service. Default 10s.
	TokenTimeout time.Duration
	// RefreshBefore is how long before its expiry a token is renewed.
	// Default 30s; never more than half the token's lifetime.
	RefreshBefore time.Duration
	// MaxResponseBytes caps an answer's body. Default 8 MiB.
	MaxResponseBytes int64
	// RefusedCredentialsWait is how long credentials the token service
	// refused (wrong user or password) are not tried again: calls with the
	// same credentials fail at once with ErrCredentials, so that the
	// retries of many documents do not lock the taxpayer's account with
	// failed logins. Changed credentials are tried at once. Only a hash of
	// the credentials is kept. Default 5m; negative disables it.
	RefusedCredentialsWait time.Duration
	// A login refused as if for wrong credentials (400 or 401) is taken for
	// an outage of the token service, retryable and not remembered, when
	// the token service says it is unavailable (temporarily_unavailable,
	// server_error), when the same credentials got a token within
	// CredentialsTrust (default 15m), or when at least OutageCompanies
	// (default 3) distinct companies were refused within OutageWindow
	// (default 2m). Negative values turn the rule off.
	CredentialsTrust time.Duration
	OutageCompanies  int
	OutageWindow     time.Duration

	// Logger defaults to slog.Default(). Credentials and tokens are never
	// logged.
	Logger *slog.Logger
	// Clock defaults to the system clock.
	Clock Clock
	// Registerer receives the client's metrics; nil registers nothing.
	Registerer prometheus.Registerer
}

// Credentials are a company's tax-authority API user and password (not the
// certificate PIN). They are passed with every call and only kept, hashed,
// to notice when a company's password changes.
type Credentials struct {
	CompanyID int64
	Username  string
	Password  []byte
	// IgnoreRefusal logs in even when these credentials were refused
	// within RefusedCredentialsWait: a caller is asking (a check call),
	// and the window only keeps background retries from locking the
	// taxpayer's account.
	IgnoreRefusal bool
}

// String hides the password so that credentials printed by mistake leak
// nothing.
func (c Credentials) String() string {
	return fmt.Sprintf("company %d user %q", c.CompanyID, c.Username)
}

func (o *Options) resolve() (Endpoints, error) {
	if o.Environment == "" {
		o.Environment = Sandbox
	}
	ep, err := EnvironmentEndpoints(o.Environment)
	if err != nil {
		return Endpoints{}, err
	}
	if o.APIURL != "" {
		ep.APIURL = o.APIURL
	}
	if o.TokenURL != "" {
		ep.TokenURL = o.TokenURL
		ep.LogoutURL = ""
		if strings.HasSuffix(o.TokenURL, "/token") {
			ep.LogoutURL = strings.TrimSuffix(o.TokenURL, "/token") + "/logout"
		}
	}
	if o.LogoutURL != "" {
		ep.LogoutURL = o.LogoutURL
	}
	if o.ClientID != "" {
		ep.ClientID = o.ClientID
	}
	ep.APIURL = strings.TrimRight(ep.APIURL, "/")
	if ep.APIURL == "" || ep.TokenURL == "" {
		return Endpoints{}, fmt.Errorf("environment %s needs the reception API URL and the token URL (the sandbox's addresses)", o.Environment)
	}
	for name, raw := range map[string]string{"API URL": ep.APIURL, "token URL": ep.TokenURL} {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Endpoints{}, fmt.Errorf("tax-authority %s %q: want an absolute http or https URL", name, raw)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.TokenTimeout <= 0 {
		o.TokenTimeout = 10 * time.Second
	}
	if o.RefreshBefore <= 0 {
		o.RefreshBefore = 30 * time.Second
	}
	if o.RefusedCredentialsWait == 0 {
		o.RefusedCredentialsWait = 5 * time.Minute
	}
	if o.CredentialsTrust == 0 {
		o.CredentialsTrust = 15 * time.Minute
	}
	if o.OutageCompanies == 0 {
		o.OutageCompanies = 3
	}
	if o.OutageWindow == 0 {
		o.OutageWindow = 2 * time.Minute
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 8 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = DefaultHTTPClient()
	}
	return ep, nil
}

// DefaultHTTPClient is the client New uses when Options.HTTPClient is nil:
// bounded dial, TLS handshake and response-header waits, and enough idle
// connections per host for many concurrent calls. Redirects are not
// followed: the reception API does not redirect, and a redirect is a
// misconfiguration to report, not to follow with a bearer token.
func DefaultHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second,
		// A submission is 12–20 KB of JSON (the signed XML in base64):
		// with the default 4 KB buffer it went out in two writes or more.
		// The cost is 28 KB more per open connection (at most 256 idle).
		WriteBufferSize: 32 << 10,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
