package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/tenant"
)

// Tenants is the tenancy service the gateway calls (tenant.Service
// satisfies it). Every method but Authenticate receives the authenticated
// principal and enforces roles and tenant isolation itself: another tenant's
// record is tenant.ErrNotFound.
type Tenants interface {
	// Authenticate verifies the AuthToken and Basic pair of one API user.
	// A wrong or missing pair is tenant.ErrUnauthenticated.
	Authenticate(ctx context.Context, token, username, password string) (tenant.Principal, error)
	// CreateReseller creates a reseller API user (admin only).
	CreateReseller(ctx context.Context, p tenant.Principal, username string) (tenant.Credentials, error)
	// SearchCompanies finds the companies the principal may see whose legal
	// name contains name.
	SearchCompanies(ctx context.Context, p tenant.Principal, name string) ([]tenant.Company, error)
	// Company returns one company, with its tax-authority password and
	// certificate PIN opened only for a principal who manages it.
	Company(ctx context.Context, p tenant.Principal, id int64) (tenant.CompanyDetail, error)
	// CreateCompany creates a company, its first branch and that branch's
	// API user.
	CreateCompany(ctx context.Context, p tenant.Principal, in tenant.CompanyInput) (tenant.CreatedCompany, error)
	// UpdateCompany replaces a company's details and returns it as
	// stored, its secrets sealed.
	UpdateCompany(ctx context.Context, p tenant.Principal, id int64, in tenant.CompanyInput) (tenant.Company, error)
	// Branches lists a company's branches.
	Branches(ctx context.Context, p tenant.Principal, companyID int64) ([]tenant.Branch, error)
	// CreateBranch creates a branch and its first API user.
	CreateBranch(ctx context.Context, p tenant.Principal, companyID int64, in tenant.BranchInput) (tenant.Branch, tenant.Credentials, error)
	// UpdateBranch replaces a branch's details.
	UpdateBranch(ctx context.Context, p tenant.Principal, companyID, branchID int64, in tenant.BranchInput) (tenant.Branch, error)
	// CreateAPIUser creates another API user for a branch.
	CreateAPIUser(ctx context.Context, p tenant.Principal, companyID, branchID int64, username string) (tenant.Credentials, error)
	BranchUsers(ctx context.Context, p tenant.Principal, companyID, branchID int64) ([]tenant.APIUser, error)
	SetBranchUserActive(ctx context.Context, p tenant.Principal, companyID, branchID, userID int64, active bool) (tenant.APIUser, error)
	RotateAPIToken(ctx context.Context, p tenant.Principal, companyID, branchID, userID int64) (tenant.Credentials, error)
	// RecordAudit appends an entry to the audit log (A.14): the gateway
	// records there every change an audited route (Route.Audit) made.
	RecordAudit(ctx context.Context, e tenant.AuditEntry) error
}

// Readiness reports whether the service can take traffic (its stores are
// reachable). A nil error means ready.
type Readiness interface {
	Ready(ctx context.Context) error
}

// ReadyCheck is a dependency /readyz reports on under its Name.
type ReadyCheck struct {
	Name  string
	Check Readiness
	// Degrades marks a dependency the service has a fallback for (Redis:
	// per-replica caches and limits): when it fails, /readyz still answers
	// 200, with status "degraded". A failing check without it makes the
	// service not ready (503).
	Degrades bool
}

// ReadyFunc adapts a function to Readiness.
type ReadyFunc func(ctx context.Context) error

// Ready calls f.
func (f ReadyFunc) Ready(ctx context.Context) error { return f(ctx) }

// Options configure a Server. Tenants is required; every other field has a
// default.
type Options struct {
	// Tenants serves the tenancy calls (A.1–A.4 and the reseller call).
	Tenants Tenants
	// Ready is asked by /readyz, reported as the check "store": the
	// service is not ready without it. Nil means none.
	Ready Readiness
	// ReadyChecks are further dependencies /readyz asks, with Ready.
	ReadyChecks []ReadyCheck
	// Routes are extra authenticated API routes, meant for the document
	// calls of A.5. They get the same request ids, body limits,
	// authentication, timeouts, error mapping and metrics as the built-in
	// routes. None are registered when empty.
	Routes []Route

	// Logger receives request failures (under their incident code) and
	// server errors. Default: slog.Default().
	Logger *slog.Logger
	// Registerer receives the gateway's collectors. Default: a private
	// registry.
	Registerer prometheus.Registerer
	// Gatherer is what /metrics exposes. Default: Registerer when it is
	// also a Gatherer (a *prometheus.Registry is), else
	// prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer

	// HeaderTimeout bounds waiting for a request's first byte and reading
	// its headers (default 10s): a connection that has not even sent its
	// credentials yet holds a descriptor for no longer than this.
	HeaderTimeout time.Duration
	// ReadTimeout bounds reading a request's body once its headers are in
	// (default 30s; a certificate upload on a slow line needs some).
	ReadTimeout time.Duration
	// WriteTimeout bounds writing one response (default 30s).
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default
	// 120s).
	IdleTimeout time.Duration
	// RequestTimeout bounds the work done for one request, authentication
	// included (default 30s). A Route may set its own.
	RequestTimeout time.Duration
	// ReadyTimeout bounds one readiness check (default
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// DrainDelay is how long Shutdown keeps serving with /readyz failing
	// before it closes the API listener, so that load balancers stop
	// sending first (default 0).
	DrainDelay time.Duration

	// AccessLogSample is the fraction, from 0 to 1, of 2xx and 3xx
	// requests whose access line Logger gets at info; every other status
	// always gets one. The zero value writes lines for failures only
	// (`facturad serve` defaults to 1, every request).
	AccessLogSample float64

	// TLSConfig, when set, makes the API listener serve HTTPS with it
	// (see NewTLSConfig); the admin listener stays plain HTTP.
	TLSConfig *tls.Config

	// MaxJSONBody is the body limit of the JSON routes (default 64 KiB).
	MaxJSONBody int
	// MaxMultipartBody is the body limit of the multipart company routes,
	// certificate included (default 4 MiB).
	MaxMultipartBody int

	// MaxConns caps the API connections open at once, and MaxConnsPerIP
	// those from one client address; a connection past the address's cap
	// is closed at once. When the table is full, a connection from an
	// address holding at least two fewer than the address holding the most
	// takes that address's oldest idle connection; otherwise it is closed
	// at once. Zero means no cap; `facturad serve` derives both from the
	// open-file limit (a quarter of the table per address) so that a flood
	// of idle connections can never use up the descriptors the service
	// needs, nor two addresses keep a third out.
	MaxConns      int
	MaxConnsPerIP int

	// TrustedProxies are the networks of the load balancers or ingresses in
	// front of the service. A request whose peer is in one of them is
	// attributed to the right-most X-Forwarded-For address that is not;
	// any other request to its peer. The address is what failed
	// authentication backs off by (tenant.WithClientAddrFunc). Default: none.
	TrustedProxies []netip.Prefix

	// Now is the clock used for certificadoVencido. Default: time.Now.
	Now func() time.Time
}

// DefaultReadyTimeout is the default ReadyTimeout: /readyz may take this
// long to answer, so a probe of it must wait longer (the Kubernetes
// manifests' readiness timeoutSeconds is checked against it).
const DefaultReadyTimeout = 2 * time.Second

const (
	defaultHeaderTimeout    = 10 * time.Second
	defaultReadTimeout      = 30 * time.Second
	defaultWriteTimeout     = 30 * time.Second
	defaultIdleTimeout      = 120 * time.Second
	defaultRequestTimeout   = 30 * time.Second
	defaultMaxJSONBody      = 64 << 10
	defaultMaxMultipartBody = 4 << 20
	// noBodyLimit is the body limit of routes that take no body.
	noBodyLimit = 4 << 10
)

func (o *Options) setDefaults() error {
	if o.Tenants == nil {
		return errors.New("gateway: Options.Tenants is required")
	}
	names := map[string]bool{"store": o.Ready != nil}
	for _, c := range o.ReadyChecks {
		if c.Name == "" || c.Check == nil || names[c.Name] {
			return fmt.Errorf("gateway: readiness check %q needs a name of its own and a check", c.Name)
		}
		names[c.Name] = true
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registerer == nil {
		r := prometheus.NewRegistry()
		o.Registerer = r
		if o.Gatherer == nil {
			o.Gatherer = r
		}
	}
	if o.Gatherer == nil {
		if g, ok := o.Registerer.(prometheus.Gatherer); ok {
			o.Gatherer = g
		} else {
			o.Gatherer = prometheus.DefaultGatherer
		}
	}
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setDur(&o.HeaderTimeout, defaultHeaderTimeout)
	setDur(&o.ReadTimeout, defaultReadTimeout)
	setDur(&o.WriteTimeout, defaultWriteTimeout)
	setDur(&o.IdleTimeout, defaultIdleTimeout)
	setDur(&o.RequestTimeout, defaultRequestTimeout)
	setDur(&o.ReadyTimeout, DefaultReadyTimeout)
	if o.DrainDelay < 0 {
		return fmt.Errorf("gateway: negative DrainDelay %s", o.DrainDelay)
	}
	if !(o.AccessLogSample >= 0 && o.AccessLogSample <= 1) {
		return fmt.Errorf("gateway: AccessLogSample %v is not between 0 and 1", o.AccessLogSample)
	}
	if o.MaxJSONBody <= 0 {
		o.MaxJSONBody = defaultMaxJSONBody
	}
	if o.MaxMultipartBody <= 0 {
		o.MaxMultipartBody = defaultMaxMultipartBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}
