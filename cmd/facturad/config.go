package main

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"facturad/cmd/internal/cmdline"
	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/trust"
	"facturad/pipeline"
	"facturad/pipeline/archivesweep"
	"facturad/pipeline/delivery"
	"facturad/pipeline/redislimit"
	"facturad/pipeline/statereport"
	"facturad/tenant"
	"facturad/tenant/archive"
)

// parseDays reads a Go duration or N days written Nd ("90d").
func parseDays(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*365 {
			return 0, fmt.Errorf("%q is not a number of days such as 90d", v)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration such as 2160h nor a number of days such as 90d", v)
	}
	return d, nil
}

// Config is everything the service reads at start. Each field has an
// environment variable FACTURAD_<NAME> and a flag --<name> (lower case; the
// underscores may also be written as hyphens). Flags win over the
// environment, the environment over the defaults.
type Config struct {
	Listen        string
	AdminListen   string
	DataDir       string
	DatabaseURL   string
	RedisURL      string
	MasterKey     string // base64 of 32 bytes; never logged
	AdminUser     string
	AdminPassword string // never logged
	AdminToken    string // never logged
	HaciendaEnv   string
	HaciendaAPI   string
	HaciendaToken string
	// The endpoints of each environment, for companies in different
	// environments (A.14); empty is the real ones.
	HaciendaStagingAPI, HaciendaStagingToken       string
	HaciendaProductionAPI, HaciendaProductionToken string
	// SandboxDelay is the built-in sandbox's processing delay.
	SandboxDelay time.Duration
	// SandboxTrustedCA is a PEM file of the authorities the built-in
	// sandbox requires documents' certificates to chain to.
	SandboxTrustedCA string
	// PublicURL is the API's base URL as the tax authority reaches it;
	// when set, every submission carries a callbackUrl under it.
	PublicURL string
	// CallbackWait is, with PublicURL, how long a submitted document waits
	// for its callback before the service asks the tax authority itself.
	CallbackWait time.Duration
	// HaciendaTrust is a PEM file of the certificate authorities the tax
	// authority's signed answers must chain to; empty is the national PKI
	// (hacienda/trust) for staging and production.
	HaciendaTrust string
	// HaciendaAnswerSigner is the identification number the tax
	// authority's answers must be signed with; empty is the Ministerio de
	// Hacienda's for staging and production, "any" checks none.
	HaciendaAnswerSigner string
	// SandboxAnswerProfile is how the built-in sandbox signs its answers:
	// hacienda (as the tax authority does) or service.
	SandboxAnswerProfile string
	LogLevel             string
	// Migrate applies the PostgreSQL migrations at start-up.
	Migrate bool
	// ShutdownTimeout bounds a graceful stop, DrainDelay included.
	ShutdownTimeout time.Duration
	// DrainDelay is how long the API keeps serving after SIGTERM with
	// /readyz failing, so that load balancers stop sending first.
	DrainDelay time.Duration
	// AccessLogSample is the fraction of 2xx and 3xx requests whose
	// access line is logged; other statuses always are.
	AccessLogSample float64
	// TLSCertFile and TLSKeyFile, when set, make the API serve HTTPS with
	// that PEM certificate chain and key, read again when they change.
	TLSCertFile string
	TLSKeyFile  string
	// SubmitTimeout bounds a send call's submission to the tax authority;
	// Lease is how long the background worker (and a send call, for its
	// own document) holds a document before another replica may take it
	// up. Zero means the pipeline's defaults (15s; 2m).
	SubmitTimeout time.Duration
	Lease         time.Duration
	// MaxConns and MaxConnsPerIP cap the API connections in all and per
	// client address; zero derives them from the open-file limit.
	MaxConns      int
	MaxConnsPerIP int
	// MaxRenders bounds the PDFs one process draws at once (downloads,
	// e-mails, exports, the archive); MaxRendersPerCompany one company's
	// downloads. Zero means hacienda/pdf's defaults.
	MaxRenders           int
	MaxRendersPerCompany int
	// Emission bounds a caller's fecha_emision around the time a send is
	// received; zero fields take hacienda.DefaultEmissionWindow's.
	Emission hacienda.EmissionWindow
	// HaciendaRate is the calls per second (submissions and status
	// queries) one company may make to the tax authority, over every
	// replica when Redis is shared; HaciendaBurst how many at once after a
	// quiet spell. Zero means pipeline.DefaultRate and DefaultBurst.
	HaciendaRate  float64
	HaciendaBurst int
	// StateMetricsInterval is how often the replica holding the state
	// lease reads the store-wide state gauges.
	StateMetricsInterval time.Duration
	// TrustedProxies lists the networks (CIDR or single addresses,
	// comma-separated) of the load balancers in front of the service,
	// whose X-Forwarded-For is believed.
	TrustedProxies string
	// PprofListen, when set, serves Go's profiler (net/http/pprof) on
	// that address, apart from the API and admin listeners.
	PprofListen string

	// SMTPURL and SMTPFrom configure the e-mail of accepted documents to
	// their receptors; unset means no e-mail. The URL holds a password:
	// never logged.
	SMTPURL  string
	SMTPFrom string
	// RegistryURL is the tax authority's public registries' base URL
	// (A.13); empty is, in the sandbox environment, the sandbox's (the
	// built-in one, or the root of HaciendaAPI), registry.DefaultURL
	// otherwise. RegistryTTL is how long
	// an answer is fresh; RegistryChecks the send-time policy (refuse,
	// warn, off), which a company may override.
	RegistryURL    string
	RegistryTTL    time.Duration
	RegistryChecks string
	// ArchiveURL is the S3-compatible archive of settled documents
	// (A.15): s3://bucket/prefix?endpoint=...&region=...; empty keeps
	// everything in the store. ArchiveAfter is how long the store keeps
	// its copy once archived. ArchiveAccessKey and ArchiveSecretKey are
	// the object store's credentials (unset: the AWS environment's);
	// never logged.
	ArchiveURL       string
	ArchiveAfter     time.Duration
	ArchiveAccessKey string
	ArchiveSecretKey string
	// WebhookWorkers is how many webhooks one replica serves at once;
	// WebhookConcurrency how many attempts run against one webhook at
	// once over every replica; WebhookTimeout bounds one attempt;
	// EmailWorkers is how many e-mails one replica sends at once. Zero
	// means the defaults of pipeline/delivery.
	WebhookWorkers     int
	WebhookConcurrency int
	WebhookTimeout     time.Duration
	// WebhookAllowPrivate lets webhooks call loopback and private
	// addresses, for trials on one machine; only in the sandbox
	// environment. Every other environment, and the sandbox without it,
	// allows public addresses only.
	WebhookAllowPrivate bool
	// DeliveryBackoff is the first wait after a failed delivery (webhook
	// or e-mail), doubled at each attempt; zero means the defaults.
	DeliveryBackoff time.Duration
	EmailWorkers    int
	// DeliveryRetention is how long after its event a settled webhook
	// delivery or e-mail is kept before the deliverers delete it; zero
	// keeps them for ever.
	DeliveryRetention time.Duration

	// MasterKeyPrevious is the master key being rotated away from: values
	// sealed under it still open, new ones are sealed under MasterKey.
	MasterKeyPrevious string // base64 of 32 bytes; never logged

	// HideCompanySecrets answers no company's tax-authority password or
	// certificate PIN over the API, not even to those who manage the
	// company (tenant.ServiceOptions.HideCompanySecrets).
	HideCompanySecrets bool

	// given is how the operator gave the settings that were set, which
	// the messages about them name (nameOf); nil: none was given.
	given *givenSettings
}

// DefaultConfig is the embedded default: SQLite and an in-process cache in
// ./data, the built-in tax-authority sandbox.
func DefaultConfig() Config {
	return Config{
		Listen:               ":8080",
		AdminListen:          ":9090",
		DataDir:              "./data",
		HaciendaEnv:          "sandbox",
		SandboxAnswerProfile: "hacienda",
		LogLevel:             "info",
		ShutdownTimeout:      30 * time.Second,
		DrainDelay:           5 * time.Second,
		AccessLogSample:      1,
		SandboxDelay:         sandbox.DefaultProcessingDelay,
		CallbackWait:         pipeline.DefaultCallbackWait,
		AdminUser:            tenant.DefaultAdminUser,
		SubmitTimeout:        pipeline.DefaultSubmitTimeout,
		Emission:             hacienda.DefaultEmissionWindow(),
		HaciendaRate:         pipeline.DefaultRate,
		HaciendaBurst:        pipeline.DefaultBurst,
		RegistryTTL:          registry.DefaultTTL,
		ArchiveAfter:         archivesweep.DefaultAfter,
		RegistryChecks:       string(registry.PolicyRefuse),

		StateMetricsInterval: statereport.DefaultInterval,

		WebhookWorkers:     delivery.DefaultWorkers,
		WebhookConcurrency: delivery.DefaultPerEndpoint,
		WebhookTimeout:     delivery.DefaultAttemptTimeout,
		EmailWorkers:       delivery.DefaultEmailWorkers,
		DeliveryRetention:  delivery.DefaultRetention,

		MaxRenders:           pdf.DefaultMaxRenders,
		MaxRendersPerCompany: pdf.DefaultMaxRendersPerCompany,
	}
}

// setting ties a configuration name to its field.
type setting struct {
	name  string // lower case, underscores: "admin_listen"
	usage string
	// def is the default in words, for a setting whose zero value in
	// DefaultConfig stands for something else; empty shows the value.
	def  string
	str  *string
	bool *bool
	dur  *time.Duration
	// days is a duration that may also be written Nd (N days).
	days *time.Duration
	num  *int
	real *float64
}

func (c *Config) settings() []setting {
	return []setting{
		{name: "listen", usage: "API listen address", str: &c.Listen},
		{name: "admin_listen", usage: "health, readiness and metrics listen address", str: &c.AdminListen},
		{name: "data_dir", usage: "folder of the embedded store, the generated master key and the built-in sandbox's state", str: &c.DataDir},
		{name: "database_url", usage: "PostgreSQL URL; unset uses the embedded SQLite store", str: &c.DatabaseURL},
		{name: "redis_url", usage: "Redis URL; unset uses an in-process cache and limiter", str: &c.RedisURL},
		{name: "master_key", usage: "base64 of the 32-byte master key (required with PostgreSQL)", def: "read from data_dir/master.key, made at first start", str: &c.MasterKey},
		{name: "master_key_previous", usage: "during a master-key rotation, base64 of the master key being replaced: values sealed under it still open, new ones are sealed under master_key (see facturad rekey)", str: &c.MasterKeyPrevious},
		{name: "admin_user", usage: "bootstrap admin user name, created once the service is up if absent", str: &c.AdminUser},
		{name: "admin_password", usage: fmt.Sprintf("bootstrap admin password, %d characters or more; when set, it replaces the stored one (serve, at start; admin-reset)", tenant.MinAdminPassword), def: "generated and printed once on a terminal", str: &c.AdminPassword},
		{name: "admin_token", usage: fmt.Sprintf("bootstrap admin API token, %d characters or more; when set, it replaces the stored one (serve, at start; admin-reset)", tenant.MinAdminToken), def: "generated and printed once on a terminal", str: &c.AdminToken},
		{name: "hide_company_secrets", usage: "answer no company's tax-authority password (contrasenaHacienda) or certificate PIN (clave) over the API, not even to the admin or the company's reseller, who otherwise read them by id; the company's own users never do", bool: &c.HideCompanySecrets},
		{name: "hacienda_env", usage: "tax authority: sandbox (built in), staging or production", str: &c.HaciendaEnv},
		{name: "hacienda_api_url", usage: "override of the reception API base URL", def: "hacienda_env's", str: &c.HaciendaAPI},
		{name: "hacienda_token_url", usage: "override of the token endpoint", def: "hacienda_env's", str: &c.HaciendaToken},
		{name: "hacienda_staging_api_url", usage: "reception API base URL of the tax authority's staging environment, where companies with ambiente pruebas submit (not with hacienda_env sandbox, where every company uses the sandbox)", def: "the real one; hacienda_api_url when hacienda_env is staging", str: &c.HaciendaStagingAPI},
		{name: "hacienda_staging_token_url", usage: "token endpoint of the staging environment", def: "the real one; hacienda_token_url when hacienda_env is staging", str: &c.HaciendaStagingToken},
		{name: "hacienda_production_api_url", usage: "reception API base URL of the production environment, where companies with ambiente produccion submit", def: "the real one; hacienda_api_url when hacienda_env is production", str: &c.HaciendaProductionAPI},
		{name: "hacienda_production_token_url", usage: "token endpoint of the production environment", def: "the real one; hacienda_token_url when hacienda_env is production", str: &c.HaciendaProductionToken},
		{name: "sandbox_processing_delay", usage: "how long the built-in sandbox takes to judge a document (recibido, procesando, then the verdict; 0 for benchmarks)", dur: &c.SandboxDelay},
		{name: "sandbox_trusted_ca", usage: "PEM file of the authorities the built-in sandbox requires signing certificates to chain to, such as the test CA of facturad mkcert (data/test-ca/ca.pem)", def: "any authority", str: &c.SandboxTrustedCA},
		{name: "public_url", usage: "the API's base URL as the tax authority reaches it (https://…); when set, the tax authority calls back when a document is settled and a document is polled only once its callback is late (callback_wait)", def: "none, polling only", str: &c.PublicURL},
		{name: "callback_wait", usage: "with public_url, how long after its submission a document waits for the tax authority's callback before the service asks for its verdict itself (a lost callback), less a jitter of up to a third; from 1s to 10m", dur: &c.CallbackWait},
		{name: "hacienda_trust_bundle", usage: "PEM file of the authorities the tax authority's signed answers must chain to", def: "the built-in sandbox's own; Costa Rica's national PKI (built in) for staging and production; none for a sandbox elsewhere: signatures are checked, their signer is not", str: &c.HaciendaTrust},
		{name: "hacienda_answer_signer", usage: "identification number the tax authority's signed answers must be signed with (its certificate's SERIALNUMBER, digits only), or any", def: "the Ministerio de Hacienda's, " + trust.MinistryIdentification + ", for staging and production; the built-in sandbox's own", str: &c.HaciendaAnswerSigner},
		{name: "sandbox_answer_profile", usage: "how the built-in sandbox signs its answers: hacienda (XAdES-BES, as the tax authority signs) or service (XAdES-EPES, as facturad signs documents)", str: &c.SandboxAnswerProfile},
		{name: "hacienda_rate", usage: "calls per second (submissions and status queries) one company may make to the tax authority, over every replica sharing redis_url", real: &c.HaciendaRate},
		{name: "hacienda_burst", usage: "calls one company may make to the tax authority at once after a quiet spell", num: &c.HaciendaBurst},
		{name: "log_level", usage: "debug, info, warn or error", str: &c.LogLevel},
		{name: "migrate", usage: "apply PostgreSQL migrations at start-up", bool: &c.Migrate},
		{name: "shutdown_timeout", usage: "how long a graceful stop may take, drain_delay included", dur: &c.ShutdownTimeout},
		{name: "drain_delay", usage: "how long the API keeps serving after SIGTERM while /readyz answers 503, so that load balancers stop sending first; below shutdown_timeout; SIGINT (Ctrl-C) stops without it", dur: &c.DrainDelay},
		{name: "access_log_sample", usage: "fraction (0 to 1) of 2xx and 3xx requests whose access line is logged; other statuses always are", real: &c.AccessLogSample},
		{name: "tls_cert_file", usage: "PEM certificate chain of the API's HTTPS, read again when it changes (with tls_key_file)", def: "none, plain HTTP", str: &c.TLSCertFile},
		{name: "tls_key_file", usage: "PEM private key of tls_cert_file", str: &c.TLSKeyFile},
		{name: "submit_timeout", usage: "how long a send waits for the tax authority to take a document", dur: &c.SubmitTimeout},
		{name: "max_conns", usage: "API connections served at once", def: "from the open-file limit", num: &c.MaxConns},
		{name: "max_conns_per_ip", usage: "API connections from one client address", def: "a quarter of max_conns", num: &c.MaxConnsPerIP},
		{name: "max_renders", usage: "PDFs one replica draws at once, over the downloads, e-mails, exports and archive; past it a download answers 503 with Retry-After and background work waits", num: &c.MaxRenders},
		{name: "max_renders_per_company", usage: "one company's PDF downloads one replica draws at once; past it 429 with Retry-After", num: &c.MaxRendersPerCompany},
		{name: "trusted_proxies", usage: "networks of the load balancers in front of the service (CIDRs, comma-separated), whose X-Forwarded-For names the client", def: "none", str: &c.TrustedProxies},
		{name: "fecha_emision_ahead", usage: "how far in the future a caller's fecha_emision may be (the callers' clock difference)", dur: &c.Emission.Ahead},
		{name: "fecha_emision_behind", usage: "how old a caller's fecha_emision may be with situacion 1 or 2", dur: &c.Emission.Behind},
		{name: "fecha_emision_offline", usage: "how old a caller's fecha_emision may be with situacion 3, sin internet", dur: &c.Emission.Offline},
		{name: "pprof_listen", usage: "loopback address of Go's profiler, /debug/pprof/", def: "off", str: &c.PprofListen},
		{name: "lease", usage: "how long a document being worked on is held from other workers and replicas; a crashed send's document is finished after it", def: "2m, or 30s more than one attempt (2×submit_timeout and the store's timeout) when that is longer", dur: &c.Lease},
		{name: "smtp_url", usage: "outgoing mail server for the accepted documents' e-mails to their receptors and the tenant events' notices to the companies: smtp://user:password@host:port (STARTTLS when offered; port 587 when none is given) or smtps://… (TLS from the start; 465)", def: "none, no e-mail", str: &c.SMTPURL},
		{name: "smtp_from", usage: "sender of those e-mails, such as \"Facturación <facturas@example.com>\" (required with smtp_url)", str: &c.SMTPFrom},
		{name: "registry_url", usage: "base URL of the tax authority's public registries (taxpayers, CAByS, exonerations, exchange rate)", def: "with hacienda_env sandbox the sandbox's (the built-in one, or the root of hacienda_api_url), else " + registry.DefaultURL, str: &c.RegistryURL},
		{name: "registry_ttl", usage: "how long a registry answer is fresh in the shared cache (a past day's exchange rate never expires); answers are kept 7 days longer to be served, marked desactualizado, while the registry cannot be reached", dur: &c.RegistryTTL},
		{name: "archive_url", usage: "S3-compatible archive of the settled documents' XML, answers and PDFs: s3://bucket/prefix?endpoint=https://host&region=...; unset keeps everything in the store", str: &c.ArchiveURL},
		{name: "archive_after", usage: "how long the store keeps its copy of an archived document's parts (a Go duration or Nd); reads then fetch them from the archive", days: &c.ArchiveAfter},
		{name: "archive_access_key", usage: "the archive's access key (with archive_secret_key; unset: the AWS environment's credentials)", str: &c.ArchiveAccessKey},
		{name: "archive_secret_key", usage: "the archive's secret key; never logged", str: &c.ArchiveSecretKey},
		{name: "registry_checks", usage: "what a send does with what the registries say about it before it is numbered: refuse (a 400 on the field), warn (advertencias on the answer) or off (the registries are not asked, tipoCambio is required); a company's validacionesRegistro overrides it", str: &c.RegistryChecks},
		{name: "webhook_workers", usage: "webhooks one replica delivers to at once", num: &c.WebhookWorkers},
		{name: "webhook_concurrency", usage: "deliveries in flight to one webhook at once, over every replica", num: &c.WebhookConcurrency},
		{name: "webhook_timeout", usage: "how long one webhook delivery may take, connection included", dur: &c.WebhookTimeout},
		{name: "webhook_allow_private", usage: "let webhooks call loopback and private addresses (10/8, 172.16/12, 192.168/16, fc00::/7, localhost), for trials on one machine; only with hacienda_env sandbox. Link-local and other special addresses stay refused", bool: &c.WebhookAllowPrivate},
		{name: "delivery_backoff", usage: "the wait after a first failed webhook or e-mail delivery, doubled at each attempt up to 6h, for 3 days", def: "5s for webhooks, 30s for e-mails", dur: &c.DeliveryBackoff},
		{name: "email_workers", usage: "e-mails one replica sends at once", num: &c.EmailWorkers},
		{name: "delivery_retention", usage: "how long after its event a delivered or failed webhook delivery or e-mail is kept (their logs over the API) before it is deleted, in small batches; 0 keeps them for ever", dur: &c.DeliveryRetention},
		{name: "state_metrics_interval", usage: "how often one replica reads the documents waiting and the certificates expiring from the store for /metrics", dur: &c.StateMetricsInterval},
	}
}

// LoadConfig reads the environment (through getenv) and then the flags in
// args over DefaultConfig.
func LoadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, error) {
	return loadSettings(fs, args, getenv, "")
}

// loadSettings is LoadConfig for the command cmd: over the settings it
// reads (commandSettings; all of them for serve, named ""), the others
// neither flags nor read from the environment, keeping their defaults.
func loadSettings(fs *flag.FlagSet, args []string, getenv func(string) string, cmd string) (Config, error) {
	c := DefaultConfig()
	given := &givenSettings{by: map[string]string{}}
	settings := settingsOf(cmd, c.settings())
	for _, s := range settings {
		v := getenv(s.env())
		if v == "" {
			continue
		}
		if err := s.set(v); err != nil {
			return c, fmt.Errorf("%s: %w", s.env(), err)
		}
		given.by[s.name] = s.env()
	}
	byFlag := map[string]string{}
	for _, s := range settings {
		names := []string{s.name}
		if alias := s.flagName(); alias != s.name {
			names = append(names, alias)
		}
		for _, n := range names {
			byFlag[n] = s.name
			if s.bool != nil {
				fs.BoolVar(s.bool, n, *s.bool, s.usage)
				continue
			}
			fs.Func(n, s.usage, s.set)
		}
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	fs.Visit(func(f *flag.Flag) {
		if name, ok := byFlag[f.Name]; ok {
			given.by[name] = "--" + f.Name
		}
	})
	if len(given.by) > 0 {
		c.given = given
	}
	return c, nil
}

// commandSettings are the settings a command other than serve reads, for
// a command that uses only a few of them: its --help lists those alone,
// and it reads no other from its flags or the environment (so that the
// service's environment, shared by a backup run in its pod, cannot fail
// it on a setting it does not use). A command not listed reads them all.
var commandSettings = map[string][]string{
	// data_dir finds the file; database_url is refused with the way to
	// back up PostgreSQL; master_key is named where the key lives.
	"backup": {"data_dir", "database_url", "master_key"},
	// The store, both keys, and the level of its log.
	"rekey": {"data_dir", "database_url", "master_key", "master_key_previous", "log_level"},
	// PostgreSQL's schema only (the embedded store migrates itself).
	"migrate": {"database_url", "log_level"},
	// The store only: a re-queue opens no sealed value.
	"requeue-emails": {"data_dir", "database_url"},
	"requeue":        {"data_dir", "database_url"},
	// The store and its keys, the cache whose entries of the old
	// credentials it drops, the admin's credentials, and its log.
	"admin-reset": {"data_dir", "database_url", "redis_url", "master_key", "master_key_previous",
		"admin_user", "admin_password", "admin_token", "log_level"},
}

// defaultAmbiente is the environment of a company created without one,
// and of those stored before environments existed: production's for
// production, pruebas (a trial) otherwise.
func (c Config) defaultAmbiente() string {
	if c.HaciendaEnv == "production" {
		return tenant.AmbienteProduccion
	}
	return tenant.AmbientePruebas
}

// commandHelp replaces, in one command's help, the usage or the default
// (when not empty) a setting has in serve, where that command treats the
// setting otherwise.
var commandHelp = map[string]map[string]struct{ usage, def string }{
	"rekey": {
		"master_key": {def: "none; rekey takes the new key only as given and never reads or creates master.key"},
	},
	"backup": {
		"master_key":   {usage: "base64 of the 32-byte master key; backup only says where the key lives, which the backup never holds", def: "unset: the key is data_dir/master.key"},
		"database_url": {usage: "PostgreSQL URL; when set, backup refuses and says how to back up PostgreSQL"},
	},
	"migrate": {
		"database_url": {usage: "PostgreSQL URL of the schema to migrate (the embedded SQLite store migrates itself)", def: "none; required"},
	},
	"admin-reset": {
		"master_key": {def: "read from data_dir/master.key, which the service made at its first start"},
		"redis_url":  {usage: "the service's Redis URL; when set, the old credentials cached there are dropped at once"},
	},
}

// settingsOf returns the settings of all that the command cmd reads
// (commandSettings; all of them when it is not listed), in the order of
// all, worded for it (commandHelp).
func settingsOf(cmd string, all []setting) []setting {
	only := commandSettings[cmd]
	var out []setting
	for _, s := range all {
		if only != nil && !slices.Contains(only, s.name) {
			continue
		}
		h := commandHelp[cmd][s.name]
		if h.usage != "" {
			s.usage = h.usage
		}
		if h.def != "" {
			s.def = h.def
		}
		out = append(out, s)
	}
	return out
}

func (s setting) set(v string) error {
	switch {
	case s.str != nil:
		*s.str = v
	case s.bool != nil:
		switch strings.ToLower(v) {
		case "1", "true", "yes", "on":
			*s.bool = true
		case "0", "false", "no", "off":
			*s.bool = false
		default:
			return fmt.Errorf("%q is not a boolean", v)
		}
	case s.dur != nil:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 30s, 5m or 1h30m", v)
		}
		*s.dur = d
	case s.days != nil:
		d, err := parseDays(v)
		if err != nil {
			return err
		}
		*s.days = d
	case s.num != nil:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a whole number of 0 or more", v)
		}
		*s.num = n
	case s.real != nil:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a number of 0 or more", v)
		}
		*s.real = f
	}
	return nil
}

// Validate checks the configuration as a whole and says precisely what is
// wrong.
func (c Config) Validate() error {
	return c.validateFor(nil)
}

// validateFor is Validate for a command that reads only the settings in
// only (commandSettings; nil: all of them). Problems of settings the
// command does not read are not its to report (migrate, which never opens
// a sealed value, needs no master_key beside database_url).
func (c Config) validateFor(only []string) error {
	var errs []error
	for _, p := range c.problems() {
		if only == nil || slices.Contains(only, p.setting) {
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}

// problem is a bad value of a setting, or a broken rule between settings.
type problem struct {
	// setting is the setting the problem is about, the first its message
	// names: "master_key".
	setting string
	// err is the message, which names each setting as the operator gave
	// it (Config.name): "FACTURAD_MASTER_KEY: required with …".
	err error
}

func (p problem) Error() string { return p.err.Error() }
func (p problem) Unwrap() error { return p.err }

// problems lists every bad value and every broken rule between settings.
// Each message starts with the setting it is about, and names every
// setting as the operator gave it: by its environment variable or by the
// flag that set it (Config.name).
func (c Config) problems() []problem {
	var errs []problem
	// add records a problem of the setting s: its name, then what
	// format says.
	add := func(s, format string, a ...any) {
		errs = append(errs, problem{setting: s, err: fmt.Errorf("%s: %w", c.name(s), fmt.Errorf(format, a...))})
	}
	// pair records a problem of two settings that go together.
	pair := func(s, t, what string) {
		errs = append(errs, problem{setting: s, err: fmt.Errorf("%s and %s: %s", c.name(s), c.name(t), what)})
	}
	if _, err := parseProxies(c.TrustedProxies); err != nil {
		add("trusted_proxies", "%w", err)
	}
	if c.Listen == "" {
		add("listen", "must not be empty")
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		add("data_dir", "required for the embedded store")
	}
	if c.DatabaseURL != "" && c.MasterKey == "" {
		add("master_key", "required with %s (PostgreSQL), as base64 of 32 bytes; generate one with `facturad keygen`", c.name("database_url"))
	}
	if c.MasterKey != "" {
		if k, err := base64.StdEncoding.DecodeString(c.MasterKey); err != nil || len(k) != 32 {
			add("master_key", "must be base64 of exactly 32 bytes")
		}
	}
	if c.MasterKeyPrevious != "" {
		if k, err := base64.StdEncoding.DecodeString(c.MasterKeyPrevious); err != nil || len(k) != 32 {
			add("master_key_previous", "must be base64 of exactly 32 bytes")
		} else if c.MasterKeyPrevious == c.MasterKey {
			add("master_key_previous", "is the same as %s", c.name("master_key"))
		}
	}
	// The bootstrap admin's settings are checked here, before anything
	// starts, rather than when the admin is made once the service is up.
	if c.AdminUser != "" && !tenant.ValidUsername(c.AdminUser) {
		add("admin_user", "must have 3 to 64 letters, digits or . _ @ - and start with a letter or digit")
	}
	if c.AdminPassword != "" && len(c.AdminPassword) < tenant.MinAdminPassword {
		add("admin_password", "must have at least %d characters", tenant.MinAdminPassword)
	}
	if c.AdminToken != "" && len(c.AdminToken) < tenant.MinAdminToken {
		add("admin_token", "must have at least %d characters", tenant.MinAdminToken)
	}
	switch c.HaciendaEnv {
	case "sandbox", "staging", "production":
	default:
		add("hacienda_env", "%q is not sandbox, staging or production", c.HaciendaEnv)
	}
	if _, err := sandbox.ParseAnswerProfile(c.SandboxAnswerProfile); err != nil {
		add("sandbox_answer_profile", "%q: want hacienda or service", c.SandboxAnswerProfile)
	}
	if s := c.HaciendaAnswerSigner; s != "" && s != "any" && !allDigits(s) {
		add("hacienda_answer_signer", "%q is not an identification number (digits only) or any", s)
	}
	for _, e := range []struct{ name, api, token string }{
		{"hacienda", c.HaciendaAPI, c.HaciendaToken},
		{"hacienda_staging", c.HaciendaStagingAPI, c.HaciendaStagingToken},
		{"hacienda_production", c.HaciendaProductionAPI, c.HaciendaProductionToken},
	} {
		if (e.api == "") != (e.token == "") {
			pair(e.name+"_api_url", e.name+"_token_url", "set both or neither")
		}
		if c.HaciendaEnv == "sandbox" && e.api != "" && e.name != "hacienda" {
			add(e.name+"_api_url", "not with %s sandbox, where every company uses the sandbox (%s points elsewhere)", c.name("hacienda_env"), c.name("hacienda_api_url"))
		}
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" || u.Fragment != "":
			add("public_url", "%q is not an absolute http(s) URL without query", c.PublicURL)
		case u.Scheme != "https" && c.HaciendaEnv != "sandbox":
			add("public_url", "must be https outside the sandbox (the tax authority posts documents' answers to it)")
		}
	}
	if c.ArchiveURL != "" {
		if _, err := archive.ParseURL(c.ArchiveURL); err != nil {
			add("archive_url", "%w", err)
		}
	}
	if c.ArchiveAfter <= 0 {
		add("archive_after", "must be a positive duration, such as 90d or 2160h")
	}
	if (c.ArchiveAccessKey == "") != (c.ArchiveSecretKey == "") {
		pair("archive_access_key", "archive_secret_key", "set both or neither")
	}
	if _, err := registry.ParsePolicy(c.RegistryChecks); err != nil {
		add("registry_checks", "%q: want refuse, warn or off", c.RegistryChecks)
	}
	if c.RegistryTTL <= 0 {
		add("registry_ttl", "must be a positive duration, such as 24h")
	}
	if c.RegistryURL != "" {
		if u, err := url.Parse(c.RegistryURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("registry_url", "want http(s)://host[/path]")
		}
	}
	if c.SMTPURL != "" || c.SMTPFrom != "" {
		if c.SMTPURL == "" || c.SMTPFrom == "" {
			pair("smtp_url", "smtp_from", "set both or neither")
		} else if _, err := delivery.ParseSMTPURL(c.SMTPURL, c.SMTPFrom); err != nil {
			// The message names the refused setting as it was given.
			var se *delivery.SMTPSettingError
			if errors.As(err, &se) {
				add(se.Setting, "%s", se.Problem)
			} else {
				add("smtp_url", "%w", err)
			}
		}
	}
	if c.WebhookAllowPrivate && c.HaciendaEnv != "sandbox" {
		add("webhook_allow_private", "only with %s sandbox (it lets the companies' webhooks reach the service's own network)", c.name("hacienda_env"))
	}
	if c.DeliveryBackoff < 0 {
		add("delivery_backoff", "must not be negative")
	}
	if c.DeliveryRetention < 0 {
		add("delivery_retention", "must not be negative (0 keeps the deliveries for ever)")
	}
	if c.WebhookTimeout < 0 {
		add("webhook_timeout", "must not be negative")
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		add("log_level", "%w", err)
	}
	if c.SandboxDelay < 0 {
		add("sandbox_processing_delay", "must not be negative")
	}
	if c.HaciendaRate > redislimit.MaxRate {
		add("hacienda_rate", "at most %d calls per second", redislimit.MaxRate)
	}
	if c.StateMetricsInterval <= 0 {
		add("state_metrics_interval", "must be positive")
	}
	if c.CallbackWait < time.Second || c.CallbackWait > 10*time.Minute {
		// Up to the safety net's interval (pipeline.Options.SafetyPoll).
		add("callback_wait", "%s must be from 1s to 10m", c.CallbackWait)
	}
	if c.ShutdownTimeout <= 0 {
		add("shutdown_timeout", "must be positive")
	}
	if c.DrainDelay < 0 || c.DrainDelay >= c.ShutdownTimeout {
		// The stop must keep time to finish the requests in flight and
		// the pipeline after the drain.
		add("drain_delay", "%s must be at least 0 and below %s (%s)", c.DrainDelay, c.name("shutdown_timeout"), c.ShutdownTimeout)
	}
	if c.AccessLogSample > 1 {
		add("access_log_sample", "must be between 0 and 1")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		pair("tls_cert_file", "tls_key_file", "set both or neither")
	}
	if c.PprofListen != "" && !loopbackAddr(c.PprofListen) {
		// The profiler shows the command line (a --master-key, a
		// --database-url with its password) and the heap.
		add("pprof_listen", "%q must be a loopback address such as 127.0.0.1:6060", c.PprofListen)
	}
	return errs
}

// loopbackAddr reports whether a listen address names a loopback host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && cmdline.LoopbackHost(host)
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	return l, nil
}

// parseProxies reads a comma-separated list of CIDRs or addresses.
func parseProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR nor an address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// pace is the per-company rate limit toward the tax authority: the
// configured rate and burst, or the pipeline's defaults.
func (c Config) pace() (rate float64, burst int) {
	rate, burst = c.HaciendaRate, c.HaciendaBurst
	if rate == 0 {
		rate = pipeline.DefaultRate
	}
	if burst == 0 {
		burst = pipeline.DefaultBurst
	}
	return rate, burst
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
