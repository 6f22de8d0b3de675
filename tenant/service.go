package tenant

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"facturad/tenant/authcache"
)

// AuthCache keeps verified credentials between requests (tenant/authcache
// has an in-process and a Redis implementation). Values are opaque bytes
// the Service encodes; a returned value must not be changed by the cache
// afterwards. Every method may fail (Redis down): the Service then falls
// back to the store.
type AuthCache interface {
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, keys ...string) error
}

// ServiceOptions configure a Service.
type ServiceOptions struct {
	// Store keeps the tenants' data. Required.
	Store Store
	// Sealer encrypts the companies' secrets at rest. Required.
	Sealer Sealer
	// Certificates opens uploaded .p12 files. Required.
	Certificates CertificateOpener
	// Cache keeps verified credentials; nil means an in-process cache.
	// A cache shared by several replicas (Redis) needs AuthKey.
	Cache AuthCache
	// AuthKey keys the digest of the user name and password kept in the
	// cache (HMAC-SHA256). Every replica sharing a cache must use the same
	// key: derive it from the master key (seal.DeriveKey). Required when
	// Cache is set; at least 32 bytes. Nil with a nil Cache means a random
	// key for this process.
	AuthKey []byte
	// AuthTTL is how long a verified pair stays cached; default 5 minutes.
	AuthTTL time.Duration
	// Passwords hashes API passwords; default Argon2id with
	// DefaultArgon2id. Lower parameters are for tests only.
	Passwords PasswordHasher
	// CredentialKey keys the HMAC-SHA-256 under which generated API
	// passwords are stored (at least 32 bytes; derive it from the master
	// key so that every replica and every restart agree). Without it every
	// password is stored with Passwords (Argon2id).
	CredentialKey []byte
	// SlowHashes bounds the Argon2id checks run at once (default
	// GOMAXPROCS); SlowHashWait is how long a check waits for a free slot
	// before the request is refused with a *BusyError (default 2s).
	SlowHashes   int
	SlowHashWait time.Duration
	// WebhookURLs decides which URLs a company may register as webhooks
	// (server-side request forgery); nil refuses every registration.
	WebhookURLs WebhookURLChecker
	// NoticeEmail says that tenant events are mailed to the companies'
	// CorreoNotificaciones (e-mail is configured); false writes no
	// notice e-mail.
	NoticeEmail bool
	// DefaultAmbiente is the environment of a company created without
	// one, and of those stored before environments existed
	// (AmbientePruebas or AmbienteProduccion; default AmbientePruebas).
	DefaultAmbiente string
	// HideCompanySecrets answers no company's tax-authority password or
	// certificate PIN to anyone: Company then opens them for nobody, not
	// even for those who manage the company (readsSecrets). The pipeline's
	// own use of them (CompanySecrets, HaciendaCredentials) is unchanged.
	HideCompanySecrets bool
	// Logger receives warnings (cache unreachable...); default discards.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// DefaultAuthTTL is how long a verified credential pair stays cached by
// default. It also bounds how long a deactivated user could keep working
// if its cache entry could not be deleted (cache unreachable at that
// moment).
const DefaultAuthTTL = 5 * time.Minute

// Service enforces the tenants' rules: who may see and change what,
// validation, credentials, certificates and secrets. The gateway calls it
// with the authenticated Principal of each request.
type Service struct {
	store     Store
	sealer    Sealer
	certs     CertificateOpener
	cache     AuthCache
	authKey   []byte
	ttl       time.Duration
	passwords PasswordHasher
	credKey   []byte
	slow      chan struct{} // a slot per Argon2id check running
	slowWait  time.Duration
	log       *slog.Logger
	now       func() time.Time
	ambiente  string // ServiceOptions.DefaultAmbiente
	// noticeEmail is ServiceOptions.NoticeEmail.
	noticeEmail bool
	// hideSecrets is ServiceOptions.HideCompanySecrets.
	hideSecrets bool

	webhookURLs WebhookURLChecker

	flight       flightGroup
	hmacs        sync.Pool    // of hash.Hash keyed with authKey
	lastCacheErr atomic.Int64 // unix nanos of the last cache warning
}

// NewService checks the options and returns a Service.
func NewService(o ServiceOptions) (*Service, error) {
	if o.Store == nil {
		return nil, errors.New("tenant: ServiceOptions.Store is required")
	}
	if o.Sealer == nil {
		return nil, errors.New("tenant: ServiceOptions.Sealer is required")
	}
	if o.Certificates == nil {
		return nil, errors.New("tenant: ServiceOptions.Certificates is required")
	}
	s := &Service{
		store:     o.Store,
		sealer:    o.Sealer,
		certs:     o.Certificates,
		cache:     o.Cache,
		authKey:   o.AuthKey,
		ttl:       o.AuthTTL,
		passwords: o.Passwords,
		log:       o.Logger,
		now:       o.Now,
		ambiente:  o.DefaultAmbiente,

		noticeEmail: o.NoticeEmail,
		hideSecrets: o.HideCompanySecrets,
		webhookURLs: o.WebhookURLs,
	}
	switch {
	case s.cache != nil && len(s.authKey) < 32:
		return nil, errors.New("tenant: ServiceOptions.AuthKey of at least 32 bytes is required with a Cache")
	case s.cache == nil && len(s.authKey) == 0:
		s.authKey = make([]byte, 32)
		if _, err := rand.Read(s.authKey); err != nil {
			return nil, fmt.Errorf("tenant: auth key: %w", err)
		}
	case len(s.authKey) < 32:
		return nil, errors.New("tenant: ServiceOptions.AuthKey must have at least 32 bytes")
	}
	if s.cache == nil {
		s.cache = authcache.NewMemory(authcache.MemoryOptions{})
	}
	if s.ttl <= 0 {
		s.ttl = DefaultAuthTTL
	}
	if len(o.CredentialKey) > 0 && len(o.CredentialKey) < 32 {
		return nil, errors.New("tenant: ServiceOptions.CredentialKey must have at least 32 bytes")
	}
	s.credKey = o.CredentialKey
	if o.SlowHashes <= 0 {
		o.SlowHashes = runtime.GOMAXPROCS(0)
	}
	s.slow = make(chan struct{}, o.SlowHashes)
	s.slowWait = o.SlowHashWait
	if s.slowWait <= 0 {
		s.slowWait = 2 * time.Second
	}
	if s.passwords == nil {
		s.passwords = DefaultArgon2id
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	switch s.ambiente {
	case "":
		s.ambiente = AmbientePruebas
	case AmbientePruebas, AmbienteProduccion:
	default:
		return nil, fmt.Errorf("tenant: ServiceOptions.DefaultAmbiente %q is not %s or %s", s.ambiente, AmbientePruebas, AmbienteProduccion)
	}
	return s, nil
}

// managesCompany reports whether p manages a company whose OwnerID is
// ownerID (0 for one an admin created): an admin, or the reseller that
// owns it. Those alone set its plan (its monthly quota) and read its
// secrets (readsSecrets).
func managesCompany(p Principal, ownerID int64) bool {
	return p.Role == RoleAdmin || (p.Role == RoleReseller && p.UserID != 0 && p.UserID == ownerID)
}

// readsSecrets reports whether p is answered company c's tax-authority
// password and certificate PIN when it reads the company by id (A.2, get
// form): only those who manage the company, an admin or the reseller that
// owns it, and nobody while HideCompanySecrets is set. A company's own
// users (every one of them belongs to a branch, and the same key is what a
// till uses) never are; they still replace the secrets by update.
func (s *Service) readsSecrets(p Principal, c Company) bool {
	return !s.hideSecrets && managesCompany(p, c.OwnerID)
}

// canSee reports whether p may see company c (A.1): an admin every company,
// a reseller the companies it owns, a branch user its own company.
func canSee(p Principal, c Company) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleReseller:
		return p.UserID != 0 && c.OwnerID == p.UserID
	case RoleBranch:
		return p.CompanyID != 0 && c.ID == p.CompanyID
	}
	return false
}

// companyFor loads a company p may see. Another tenant's company answers
// ErrNotFound, exactly as a missing one does.
func (s *Service) companyFor(ctx context.Context, p Principal, id int64) (Company, error) {
	if id <= 0 {
		return Company{}, ErrNotFound
	}
	if p.Role == RoleBranch && p.CompanyID != id {
		return Company{}, fmt.Errorf("company %d: %w", id, ErrNotFound)
	}
	c, err := s.store.Company(ctx, id)
	if err != nil {
		return Company{}, fmt.Errorf("company %d: %w", id, err)
	}
	if !canSee(p, c) {
		return Company{}, fmt.Errorf("company %d: %w", id, ErrNotFound)
	}
	return c, nil
}

// branchFor loads a branch of a company p may see.
func (s *Service) branchFor(ctx context.Context, p Principal, companyID, branchID int64) (Company, Branch, error) {
	c, err := s.companyFor(ctx, p, companyID)
	if err != nil {
		return Company{}, Branch{}, err
	}
	if branchID <= 0 {
		return Company{}, Branch{}, ErrNotFound
	}
	b, err := s.store.Branch(ctx, branchID)
	if err != nil {
		return Company{}, Branch{}, fmt.Errorf("branch %d: %w", branchID, err)
	}
	if b.CompanyID != c.ID {
		return Company{}, Branch{}, fmt.Errorf("branch %d: %w", branchID, ErrNotFound)
	}
	return c, b, nil
}

// newUser generates credentials for a new API user. An empty username is
// derived from the company's identification and branch code.
func (s *Service) newUser(username string, role Role, identificacion, sucursal string) (APIUser, Credentials, error) {
	if username == "" {
		var err error
		if username, err = generatedUsername(identificacion, sucursal); err != nil {
			return APIUser{}, Credentials{}, err
		}
	}
	password, token, err := newSecrets()
	if err != nil {
		return APIUser{}, Credentials{}, err
	}
	return s.userWith(context.Background(), username, password, token, role, false)
}

// userWith builds a user with its credentials; chosen says a person chose
// the password (it is then stored with the slow hash).
func (s *Service) userWith(ctx context.Context, username, password, token string, role Role, chosen bool) (APIUser, Credentials, error) {
	hash, err := s.hashPassword(ctx, []byte(password), chosen)
	if err != nil {
		return APIUser{}, Credentials{}, fmt.Errorf("hash password: %w", err)
	}
	u := APIUser{
		Username:     username,
		PasswordHash: hash,
		TokenHash:    HashToken(token),
		Role:         role,
		Activo:       true,
	}
	return u, Credentials{Usuario: username, Contrasena: password, APIToken: token}, nil
}

func flag(v string) bool { return v == "S" }
