package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"facturad/gateway"
	"facturad/hacienda/pdf"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/registry"
	"facturad/hacienda/sandbox"
	"facturad/hacienda/trust"
	"facturad/metrics"
	"facturad/pipeline"
	"facturad/pipeline/delivery"
	"facturad/pipeline/dependency"
	"facturad/pipeline/eventsweep"
	"facturad/pipeline/export"
	"facturad/pipeline/redislimit"
	"facturad/pipeline/statereport"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/archive"
	"facturad/tenant/authcache"
	"facturad/tenant/certopen"
	"facturad/tenant/postgres"
	"facturad/tenant/printed"
	"facturad/tenant/seal"
	"facturad/tenant/sqlite"
)

// newRegistry makes the service's metrics registry. Tests replace it to see
// every collector the service registers, whether it has series yet or not.
var newRegistry = metrics.NewRegistry

// runServe runs the service until ctx is cancelled (SIGINT or SIGTERM in
// main), then stops it gracefully: after the drain delay on SIGTERM, at
// once on SIGINT (interactiveStop).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	c, err := loadConfig("serve", args, stdout, stderr, getenv)
	if err != nil {
		return err
	}
	return serve(ctx, c, stdout, newLogger(stderr, c.LogLevel))
}

// cleanups is a LIFO list of named stop functions: what started last stops
// first.
type cleanups struct {
	log   *slog.Logger
	funcs []func(context.Context) error
	names []string
}

func (c *cleanups) add(name string, f func(context.Context) error) {
	c.names = append(c.names, name)
	c.funcs = append(c.funcs, f)
}

// run stops every part, logging each that fails, and returns how many
// failed.
func (c *cleanups) run(ctx context.Context) (failed int) {
	for i := len(c.funcs) - 1; i >= 0; i-- {
		start := time.Now()
		if err := c.funcs[i](ctx); err != nil {
			c.log.Error("stop", "part", c.names[i], "err", err)
			failed++
			continue
		}
		c.log.Debug("stopped", "part", c.names[i], "took_ms", time.Since(start).Milliseconds())
	}
	return failed
}

// serve wires the parts, prints where it listens and blocks until ctx ends.
func serve(ctx context.Context, c Config, stdout io.Writer, log *slog.Logger) (err error) {
	start := time.Now()
	var stop cleanups
	stop.log = log
	var stopping time.Time // set when ctx ends: a stop asked for
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
		defer cancel()
		failed := stop.run(sctx)
		if stopping.IsZero() {
			return // a failed start or a failed server says so itself
		}
		// The last line of a stop, so that the log tells a stop that
		// finished from a process killed in the middle of one.
		if failed > 0 {
			log.Warn("stopped, some parts with errors", "took", time.Since(stopping), "failed_parts", failed)
			return
		}
		log.Info("stopped", "took", time.Since(stopping))
	}()

	w := &wiring{c: c, log: log, stop: &stop, renders: pdf.NewLimiter(c.MaxRenders, c.MaxRendersPerCompany)}
	// What the configuration starts with that the operator should know
	// is said first, whatever follows.
	w.warnSettings()
	// Of the parts, the listeners come first: a busy port must stop the
	// start before anything is written, the bootstrap admin above all.
	if err := w.listen(); err != nil {
		return err
	}
	if err := w.readFiles(); err != nil {
		return err
	}
	if err := w.openStoreAndKeys(ctx); err != nil {
		return err
	}
	w.reg = newRegistry()
	build := readBuildInfo()
	if err := build.register(w.reg); err != nil {
		return fmt.Errorf("build info: %w", err)
	}
	if err := w.openCacheAndLimiter(); err != nil {
		return err
	}
	if err := w.openTenants(); err != nil {
		return err
	}
	// Before anything numbers: what was stored before companies had
	// environments joins the configured one.
	if err := w.tenants.AdoptEnvironment(ctx); err != nil {
		return err
	}
	if err := w.openArchive(ctx); err != nil {
		return err
	}
	if err := w.startPipeline(ctx); err != nil {
		return err
	}
	if err := w.startDelivery(ctx); err != nil {
		return err
	}
	if err := w.startStateMetrics(ctx); err != nil {
		return err
	}
	if err := w.startEventSweeps(ctx); err != nil {
		return err
	}
	if err := w.startArchiveSweep(ctx); err != nil {
		return err
	}
	if err := w.startDependencyProbes(ctx); err != nil {
		return err
	}
	apiLn, adminLn, errc, err := w.startGateway()
	if err != nil {
		return err
	}

	// Only now, with the listeners bound and served, is the bootstrap admin
	// created (or given its configured credentials); what the operator
	// must know about it follows the line saying where the service listens,
	// which says that the service is ready.
	var adminNote bytes.Buffer
	if err := w.bootstrapAdmin(ctx, &adminNote, isTerminal(stdout)); err != nil {
		return err
	}
	scheme := "http"
	if c.TLSCertFile != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "facturad listening: api %s://%s  admin http://%s  (store %s, tax authority %s, started in %s)\n%s",
		scheme, apiLn.Addr(), adminLn.Addr(), storeName(c), c.HaciendaEnv, time.Since(start).Round(time.Millisecond), adminNote.Bytes())
	log.Info("started", "version", build.Version, "revision", build.Revision, "go", build.GoVersion,
		"api", apiLn.Addr().String(), "admin", adminLn.Addr().String(), "store", storeName(c), "rsa", build.Signer)

	select {
	case <-ctx.Done():
		stopping = time.Now()
		drain := c.DrainDelay
		if interactiveStop(ctx) {
			w.noDrain, drain = true, 0 // Ctrl-C: nobody to drain from
		}
		log.Info("stopping", "cause", context.Cause(ctx), "drain", drain)
		return nil
	case err := <-errc:
		w.noDrain = true // the server already failed
		return fmt.Errorf("server: %w", err)
	}
}

// wiring is the service being put together: each step opens or starts one
// part, keeps what the later steps need and registers its stop in stop.
type wiring struct {
	c    Config
	log  *slog.Logger
	stop *cleanups
	reg  *prometheus.Registry

	store storeWithDocuments
	// reads is store with the parts it dropped read from the archive
	// (archive_url); the store itself otherwise. The readers of the
	// documents' parts are given it.
	reads   storeWithDocuments
	archive *archive.Client // nil without archive_url
	sealer  *seal.Sealer
	authKey []byte // seals the credential cache's entries
	credKey []byte // seals generated API passwords
	// callbackKey keys the tokens of the tax authority's callback URLs.
	callbackKey []byte
	// apiLn and adminLn are bound before anything else opens.
	apiLn, adminLn net.Listener
	tlsConfig      *tls.Config // the API's, nil for plain HTTP
	// answerRoots (hacienda_trust_bundle) and sandboxCAs
	// (sandbox_trusted_ca, read for the built-in sandbox only); nil: none.
	answerRoots, sandboxCAs *x509.CertPool
	listKey                 []byte // keys the MAC of the listings' cursors
	cache                   tenant.AuthCache
	limiter                 pipeline.Limiter
	redis                   *redis.Client // nil without redis_url
	// hacienda is the client of hacienda_env's environment, smtp the mail
	// server (nil without smtp_url): the dependency probes ask them.
	hacienda *recepcion.Client
	smtp     *delivery.SMTP
	tenants  *tenant.Service
	docs     *pipeline.Pipeline
	registry *registry.Registry
	// renders bounds the PDF renders of every path: the downloads, the
	// e-mails, the exports and the archive share it.
	renders *pdf.Limiter
	// print makes what each of those PDFs shows beside the XML: the
	// environment's mark (every document is the sandbox's with
	// hacienda_env sandbox) and its company's logo and notes.
	print printed.Printer
	// noDrain is set when serving failed, or the stop is interactive
	// (SIGINT): the gateway then stops without its drain delay.
	noDrain bool
	// served is set once the gateway owns the listeners.
	served bool
}

// readFiles reads the files the settings name: the API's TLS pair and the
// trust bundles. Like a busy port, a missing or bad one stops the start
// before the store and its master key are made.
func (w *wiring) readFiles() (err error) {
	if w.tlsConfig, err = w.apiTLS(); err != nil {
		return err
	}
	if w.answerRoots, err = loadTrustBundle(w.c.HaciendaTrust); err != nil {
		return fmt.Errorf("%s: %w", w.c.name("hacienda_trust_bundle"), err)
	}
	if builtInSandbox(w.c) {
		if w.sandboxCAs, err = loadTrustBundle(w.c.SandboxTrustedCA); err != nil {
			return fmt.Errorf("%s: %w", w.c.name("sandbox_trusted_ca"), err)
		}
	}
	return nil
}

// builtInSandbox reports whether the service starts the sandbox in process
// as its tax authority: the sandbox environment with no API override.
func builtInSandbox(c Config) bool { return c.HaciendaEnv == "sandbox" && c.HaciendaAPI == "" }

// openStoreAndKeys opens the store and the master key that goes with it,
// and makes the sealer and the keys derived from the master key.
func (w *wiring) openStoreAndKeys(ctx context.Context) error {
	store, masterKey, err := openStore(ctx, w.c, w.stop)
	if err != nil {
		return err
	}
	w.store = store
	return w.openKeys(ctx, masterKey)
}

// openCacheAndLimiter makes the credential cache and the rate limiter:
// shared through Redis when redis_url is set, else in process.
func (w *wiring) openCacheAndLimiter() error {
	if w.c.RedisURL != "" {
		return w.openRedisCacheAndLimiter()
	}
	w.cache = authcache.NewMemory(authcache.MemoryOptions{})
	w.limiter = pipeline.NewTokenBucket(w.c.pace())
	return nil
}

// openRedisCacheAndLimiter connects to Redis and makes the credential
// cache and the rate limiter shared by the replicas of this deployment.
func (w *wiring) openRedisCacheAndLimiter() error {
	rdb, err := openRedis(w.c.RedisURL, w.log)
	if err != nil {
		return fmt.Errorf("%s: %w", w.c.name("redis_url"), err)
	}
	w.stop.add("redis", func(context.Context) error { return rdb.Close() })
	w.redis = rdb
	// Entries are sealed with the auth cache key: another deployment
	// sharing this Redis (another store, so another key) must not read
	// them, so the key's fingerprint is part of the prefix. The key is
	// stored in the store and kept through a master-key rotation
	// (docs/design/secrets.md, "Derived keys"), so the prefix, and the
	// entries under it, stay the same across a rotation.
	fp := sha256.Sum256(w.authKey)
	rc, err := authcache.NewRedis(rdb, authcache.RedisOptions{Prefix: "facturad:auth:" + hex.EncodeToString(fp[:4]) + ":"})
	if err != nil {
		return fmt.Errorf("redis auth cache: %w", err)
	}
	w.cache = rc
	// One pace per company over every replica of this deployment (the
	// same fingerprint); each replica paces alone while Redis fails.
	rate, burst := w.c.pace()
	limiter, err := redislimit.New(rdb, redislimit.Options{
		Rate:       rate,
		Burst:      burst,
		Prefix:     "facturad:limit:" + hex.EncodeToString(fp[:4]) + ":",
		Logger:     w.log,
		Registerer: w.reg,
	})
	if err != nil {
		return fmt.Errorf("redis rate limiter: %w", err)
	}
	w.limiter = limiter
	return nil
}

// listen binds the API and admin listeners. They are closed at stop
// unless the gateway took them over (its shutdown closes them).
func (w *wiring) listen() error {
	apiLn, err := net.Listen("tcp", w.c.Listen)
	if err != nil {
		return listenError(w.c, "api", "listen", w.c.Listen, err, w.c.AdminListen)
	}
	adminLn, err := net.Listen("tcp", w.c.AdminListen)
	if err != nil {
		apiLn.Close()
		return listenError(w.c, "admin", "admin_listen", w.c.AdminListen, err)
	}
	w.apiLn, w.adminLn = apiLn, adminLn
	w.stop.add("listeners", func(context.Context) error {
		if w.served {
			return nil
		}
		return errors.Join(apiLn.Close(), adminLn.Close())
	})
	return nil
}

// listenError says which listener could not listen on addr and which
// setting moves it, so that a user whose port is taken knows what to
// change, with an address near addr that is free now (none of avoid, the
// addresses the other listeners are about to take), when there is one.
// The setting is named as the operator gave it (its flag, which wins, or
// its variable), else both ways.
func listenError(c Config, which, name, addr string, err error, avoid ...string) error {
	how, given := c.nameOf(name)
	example := how
	if !given {
		s := setting{name: name}
		how = "--" + s.flagName() + " or " + s.env()
	}
	if free := freeAddressNear(addr, avoid...); free != "" {
		example = fmt.Sprintf(", e.g. %s=%s", example, free)
	} else {
		example = ""
	}
	return fmt.Errorf("%s listener: %w (choose another address with %s%s)", which, err, how, example)
}

// freeAddressNear returns the first of the next 20 ports after addr's, on
// its host, that can be listened on now and is not in avoid; "" when addr
// has no port number or none is free. The port is closed again: it is
// a suggestion, which another program may take meanwhile.
func freeAddressNear(addr string, avoid ...string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 {
		return ""
	}
	for next := p + 1; next <= p+20 && next <= 65535; next++ {
		cand := net.JoinHostPort(host, strconv.Itoa(next))
		if slices.Contains(avoid, cand) {
			continue
		}
		ln, err := net.Listen("tcp", cand)
		if err != nil {
			continue
		}
		ln.Close()
		return cand
	}
	return ""
}

// openTenants makes the tenant service.
func (w *wiring) openTenants() (err error) {
	w.tenants, err = tenant.NewService(tenant.ServiceOptions{
		WebhookURLs:   w.webhookPolicy(),
		Store:         w.store,
		Sealer:        w.sealer,
		Certificates:  certopen.Opener{},
		Cache:         w.cache,
		AuthKey:       w.authKey,
		CredentialKey: w.credKey,
		Logger:        w.log,
		// hacienda_env's environment for new companies and old ones.
		DefaultAmbiente: w.c.defaultAmbiente(),
		// Tenant events are mailed to correoNotificaciones with the
		// documents' e-mails' server.
		NoticeEmail: w.c.SMTPURL != "",
		// Who reads a company's secrets by id: its managers, or nobody.
		HideCompanySecrets: w.c.HideCompanySecrets,
	})
	if err != nil {
		return err
	}
	w.print = printed.Printer{
		Companies: printed.NewCache(w.tenants, 0, 0),
		Sandbox:   w.c.HaciendaEnv == "sandbox",
	}
	return nil
}

// bootstrapAdmin makes sure the bootstrap admin exists and prints what the
// operator needs to know about its credentials:
//
//   - absent: it is created, and what was generated is printed when
//     terminal is set (the service's standard output is a terminal);
//     otherwise, as in a container whose output is collected into a log,
//     no secret is printed, and a warning says that credentials were
//     generated and how to get new ones with `facturad admin-reset`;
//   - present, with admin_password or admin_token configured: the
//     configured values take effect (they replace the stored ones);
//   - present, nothing configured: nothing changes, and the output says
//     how to recover access if the printed credentials were lost.
func (w *wiring) bootstrapAdmin(ctx context.Context, stdout io.Writer, terminal bool) error {
	c := w.c
	if c.AdminPassword == "" && c.AdminToken == "" {
		creds, created, err := w.tenants.EnsureAdmin(ctx, c.AdminUser, "", "")
		if err != nil {
			return fmt.Errorf("bootstrap admin: %w", err)
		}
		if created {
			w.printBootstrapChange(stdout, tenant.AdminChange{Created: true, Credentials: creds, Generated: []string{"contrasena", "apiToken"}}, terminal)
			return nil
		}
		fmt.Fprintf(stdout, "bootstrap admin %s exists; its credentials were shown when it was created, if that start's output was a terminal. "+
			"Lost them, or never shown? Set %s and %s and start again, or run `facturad admin-reset` (docs/operations.md, \"Recover admin access\")\n",
			adminName(c), c.name("admin_password"), c.name("admin_token"))
		return nil
	}
	ch, err := w.tenants.SetAdminCredentials(ctx, c.AdminUser, c.AdminPassword, c.AdminToken, false)
	if err != nil {
		return fmt.Errorf("bootstrap admin (configured %s/%s): %w", c.name("admin_password"), c.name("admin_token"), err)
	}
	w.printBootstrapChange(stdout, ch, terminal)
	if ch.Changed() {
		w.log.Info("bootstrap admin credentials set from the configuration", "usuario", adminName(c),
			"created", ch.Created, "password_set", ch.PasswordSet, "token_set", ch.TokenSet)
	}
	return nil
}

// adminName is the bootstrap admin's user name.
func adminName(c Config) string {
	if c.AdminUser == "" {
		return "admin"
	}
	return c.AdminUser
}

// startPipeline opens the tax-authority client and the certificate cache
// and starts the document pipeline over them.
func (w *wiring) startPipeline(ctx context.Context) error {
	clients, answers, sandboxRoot, err := openHacienda(ctx, w.c, w.answerRoots, w.sandboxCAs, w.log, w.reg, w.stop)
	if err != nil {
		return err
	}
	if w.registry, err = w.openRegistry(sandboxRoot); err != nil {
		return err
	}
	certs, err := signer.NewCache(signer.CacheOptions{
		Source: w.tenants,
		// A new certificate uploaded on another replica is seen within this.
		VersionCheckInterval: 5 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("certificate cache: %w", err)
	}
	docs, err := pipeline.New(pipeline.Options{
		Store:        w.reads,
		Issuers:      w.tenants,
		Signer:       certs,
		Submitter:    clients.def,
		Environments: clients.submitters(),
		Limiter:      w.limiter,
		Logger:       w.log,
		Registerer:   w.reg,
		// A send holds its document as long as a claim would.
		Timings:             pipeline.Timings{SubmitTimeout: w.c.SubmitTimeout, Lease: w.c.Lease, InFlightGrace: w.c.Lease, CallbackWait: w.c.CallbackWait},
		Emission:            w.c.Emission,
		AnswerRoots:         answers.roots,
		AnswerIntermediates: answers.intermediates,
		AnswerSigner:        answers.signer,
		SupplierPKI:         answers.suppliers,
		CallbackBase:        w.c.PublicURL,
		CallbackKey:         w.callbackKey,
		Email:               w.c.SMTPURL != "",
		Registry:            w.registry,
		RegistryChecks:      registry.Policy(w.c.RegistryChecks),
	})
	if err != nil {
		return err
	}
	if err := docs.Start(ctx); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	w.stop.add("pipeline", func(ctx context.Context) error {
		if err := docs.Stop(ctx); err != nil {
			return errors.Join(err, docs.StopAndCancel(context.Background()))
		}
		return nil
	})
	w.docs = docs
	w.hacienda = clients.def
	return nil
}

// webhookPolicy is which webhook URLs may be registered and called: http
// as well as https in the sandbox environment, public addresses only in
// every environment unless webhook_allow_private (which Validate accepts
// in the sandbox only) lets loopback and private ones through for trials.
func (w *wiring) webhookPolicy() delivery.URLPolicy {
	return delivery.URLPolicy{AllowHTTP: w.c.HaciendaEnv == "sandbox", AllowPrivate: w.c.privateWebhooks(), Logger: w.log}
}

// startDelivery starts the webhook deliverer and, with smtp_url, the
// mailer, over the store's outbox.
func (w *wiring) startDelivery(ctx context.Context) error {
	holder, err := leaseHolder()
	if err != nil {
		return err
	}
	d, err := delivery.New(delivery.Options{
		Store:          w.store,
		Secrets:        w.tenants,
		Holder:         holder,
		Policy:         w.webhookPolicy(),
		Workers:        w.c.WebhookWorkers,
		PerEndpoint:    w.c.WebhookConcurrency,
		AttemptTimeout: w.c.WebhookTimeout,
		BackoffBase:    w.c.DeliveryBackoff,
		Retention:      retention(w.c.DeliveryRetention),
		Logger:         w.log,
		Registerer:     w.reg,
	})
	if err != nil {
		return err
	}
	if err := d.Start(ctx); err != nil {
		return err
	}
	w.stop.add("webhooks", d.Stop)
	if w.c.SMTPURL == "" {
		return nil
	}
	server, err := delivery.ParseSMTPURL(w.c.SMTPURL, w.c.SMTPFrom)
	if err != nil {
		return err
	}
	m, err := delivery.NewMailer(delivery.MailerOptions{
		Store:       w.reads,
		Sender:      server,
		PDF:         delivery.PrintedPDF{Renders: w.renders, Printer: w.print},
		Sandbox:     w.c.HaciendaEnv == "sandbox",
		Workers:     w.c.EmailWorkers,
		BackoffBase: w.c.DeliveryBackoff,
		Logger:      w.log,
		Registerer:  w.reg,
	})
	if err != nil {
		return err
	}
	if err := m.Start(ctx); err != nil {
		return err
	}
	w.stop.add("email", m.Stop)
	w.smtp = &server
	w.log.Info("e-mail of accepted documents and tenant notices on", "smtp", server.String())
	return nil
}

// retention is delivery_retention as delivery.Options takes it: the
// setting's 0 (keep for ever) is a negative retention there, whose 0 is
// the default.
func retention(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// leaseHolder names this process in the delivery leases.
func leaseHolder() (string, error) {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b)), nil
}

// startStateMetrics registers the pool collectors and starts the reporter
// of the store-wide state gauges (only the replica holding its lease
// exports them).
func (w *wiring) startStateMetrics(ctx context.Context) error {
	if pg, ok := w.store.(*postgres.Store); ok {
		w.reg.MustRegister(metrics.NewDBPoolCollector(func() metrics.DBPoolStats {
			st := pg.PoolStats()
			return metrics.DBPoolStats{
				AcquiredConns: st.AcquiredConns, IdleConns: st.IdleConns, TotalConns: st.TotalConns, MaxConns: st.MaxConns,
				Acquires: st.Acquires, EmptyAcquires: st.EmptyAcquires, CanceledAcquires: st.CanceledAcquires,
				AcquireWait: st.AcquireWait,
			}
		}))
	}
	if rdb := w.redis; rdb != nil {
		w.reg.MustRegister(metrics.NewRedisPoolCollector(func() metrics.RedisPoolStats {
			st := rdb.PoolStats()
			return metrics.RedisPoolStats{Hits: st.Hits, Misses: st.Misses, Timeouts: st.Timeouts,
				StaleConns: st.StaleConns, TotalConns: st.TotalConns, IdleConns: st.IdleConns}
		}))
	}
	rep, err := statereport.New(statereport.Options{
		Store:      w.store,
		Interval:   w.c.StateMetricsInterval,
		Registerer: w.reg,
		Logger:     w.log,
	})
	if err != nil {
		return err
	}
	if err := rep.Start(ctx); err != nil {
		return err
	}
	w.stop.add("state metrics", rep.Stop)
	return nil
}

// startEventSweeps starts the checks that announce the tenant events: the
// certificates at once, then both checks at least hourly on one replica at
// a time (pipeline/eventsweep).
func (w *wiring) startEventSweeps(ctx context.Context) error {
	sw, err := eventsweep.New(eventsweep.Options{Checks: w.tenants, Leases: w.store, Logger: w.log})
	if err != nil {
		return err
	}
	if err := sw.Start(ctx); err != nil {
		return err
	}
	w.stop.add("tenant events", sw.Stop)
	return nil
}

// storePing is the store's readiness check.
func (w *wiring) storePing() gateway.ReadyFunc { return gateway.ReadyFunc(w.store.Ping) }

// redisPing is Redis's readiness check; nil without redis_url.
func (w *wiring) redisPing() gateway.ReadyFunc {
	rdb := w.redis
	if rdb == nil {
		return nil
	}
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
}

// Dependency probes (facturad_dependency_up): the store and Redis with
// the readiness checks themselves; the tax authority by its client's
// latest exchange while it is at most haciendaRecent old, else a GET of
// its token endpoint, and the mail server by a session without a login,
// at most every slowProbeInterval (they are other parties' servers);
// the archive by its bucket check.
const haciendaRecent = 2 * time.Minute

// How often the store, Redis and the archive are probed
// (dependency.DefaultInterval), and the tax authority and the mail
// server; tests shorten both.
var (
	dependencyProbeInterval = dependency.DefaultInterval
	slowProbeInterval       = time.Minute
)

// startDependencyProbes starts the background probes of the configured
// dependencies.
func (w *wiring) startDependencyProbes(ctx context.Context) error {
	checks := []dependency.Check{{Name: "store", Probe: w.storePing()}}
	if ping := w.redisPing(); ping != nil {
		checks = append(checks, dependency.Check{Name: "redis", Probe: ping})
	}
	if h := w.hacienda; h != nil {
		checks = append(checks, dependency.Check{Name: "hacienda", Interval: slowProbeInterval,
			Probe: func(ctx context.Context) error { return h.Reachable(ctx, haciendaRecent) }})
	}
	if m := w.smtp; m != nil {
		checks = append(checks, dependency.Check{Name: "smtp", Interval: slowProbeInterval, Probe: m.Probe})
	}
	if a := w.archive; a != nil {
		checks = append(checks, dependency.Check{Name: "archive", Probe: a.Check})
	}
	p, err := dependency.New(dependency.Options{Checks: checks, Interval: dependencyProbeInterval, Registerer: w.reg, Logger: w.log})
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	w.stop.add("dependency probes", p.Stop)
	return nil
}

// startGateway makes the gateway, opens the API and admin listeners and
// serves them; a serving error arrives on errc.
func (w *wiring) startGateway() (apiLn, adminLn net.Listener, errc <-chan error, err error) {
	maxConns, perIP := connectionCaps(w.c, raiseOpenFileLimit(w.log))
	proxies, err := parseProxies(w.c.TrustedProxies)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", w.c.name("trusted_proxies"), err)
	}
	// Redis has fallbacks (credentials checked against the store, each
	// replica pacing alone): its loss degrades the service, the store's
	// stops it. The same checks feed facturad_dependency_up.
	var checks []gateway.ReadyCheck
	if ping := w.redisPing(); ping != nil {
		checks = append(checks, gateway.ReadyCheck{Name: "redis", Degrades: true, Check: ping})
	}
	list, err := gateway.DocumentListRoute(w.docs, w.listKey)
	if err != nil {
		return nil, nil, nil, err
	}
	listReceived, err := gateway.ReceivedListRoute(w.docs, w.listKey)
	if err != nil {
		return nil, nil, nil, err
	}
	audit, err := gateway.AuditRoute(w.tenants, w.listKey)
	if err != nil {
		return nil, nil, nil, err
	}
	operators, err := gateway.OperatorRoutes(w.tenants, w.listKey)
	if err != nil {
		return nil, nil, nil, err
	}
	// The export reads the documents through the store the pipeline
	// reads them through (and the received ones through its received
	// store): with the archive on, that store fills the parts it dropped
	// from the archive, so an export holds every document whatever its age.
	exo := export.Options{Companies: w.tenants, Documents: w.reads, Renders: w.renders, Printer: w.print, Logger: w.log}
	if rs, ok := w.reads.(tenant.ReceivedStore); ok {
		exo.Received = rs
	}
	exporter, err := export.New(exo)
	if err != nil {
		return nil, nil, nil, err
	}
	gw, err := gateway.New(gateway.Options{
		MaxConns:       maxConns,
		MaxConnsPerIP:  perIP,
		TrustedProxies: proxies,
		Tenants:        w.tenants,
		Routes: slices.Concat(gateway.DocumentRoutes(w.docs, w.renders, w.print), gateway.ReceivedRoutes(w.docs, w.renders, w.print), gateway.WebhookRoutes(w.tenants),
			[]gateway.Route{list, listReceived, audit, gateway.CalculateRoute(), gateway.CallbackRoute(w.docs)},
			gateway.EmailRoutes(w.docs, w.tenants), gateway.RegistryRoutes(w.registry), []gateway.Route{gateway.ConnectionTestRoute(w.docs)}, operators,
			gateway.UsageRoutes(w.tenants), []gateway.Route{gateway.IVARoute(w.tenants), gateway.ExportRoute(exporter)}, gateway.DerivedRoutes(w.docs)),
		Ready:       w.storePing(),
		ReadyChecks: checks,
		Logger:      w.log,
		Registerer:  w.reg,
		Gatherer:    w.reg,

		DrainDelay:      w.c.DrainDelay,
		AccessLogSample: w.c.AccessLogSample,
		TLSConfig:       w.tlsConfig,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	apiLn, adminLn = w.apiLn, w.adminLn
	serveErr := make(chan error, 3)
	if err := w.startProfiler(serveErr); err != nil {
		return nil, nil, nil, err
	}
	w.served = true
	go func() { serveErr <- gw.Serve(apiLn) }()
	go func() { serveErr <- gw.ServeAdmin(adminLn) }()
	w.stop.add("gateway", func(ctx context.Context) error {
		if w.noDrain {
			return gw.ShutdownNow(ctx)
		}
		return gw.Shutdown(ctx)
	})
	return apiLn, adminLn, serveErr, nil
}

// apiTLS returns the API's TLS settings when a certificate is configured
// (without one, the start warns when the API listens on more than
// loopback: Config.warnings).
func (w *wiring) apiTLS() (*tls.Config, error) {
	if w.c.TLSCertFile == "" {
		return nil, nil
	}
	cfg, err := gateway.NewTLSConfig(w.c.TLSCertFile, w.c.TLSKeyFile, w.log)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", w.c.name("tls_cert_file"), w.c.name("tls_key_file"), err)
	}
	return cfg, nil
}

// startProfiler serves Go's profiler on PprofListen when it is set. It is
// apart from the admin listener so that scraping metrics never exposes it.
func (w *wiring) startProfiler(errc chan<- error) error {
	if w.c.PprofListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", w.c.PprofListen)
	if err != nil {
		return listenError(w.c, "pprof", "pprof_listen", "127.0.0.1:6061", err)
	}
	// The mutex and block profiles are empty unless sampled: a fraction
	// of the contended locks and a blocking event per millisecond spent
	// blocked, a cost paid only while the profiler is on.
	runtime.SetMutexProfileFraction(profileMutexFraction)
	runtime.SetBlockProfileRate(profileBlockRate)
	srv := profilerServer(w.log)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("pprof: %w", err)
		}
	}()
	w.stop.add("pprof", srv.Shutdown)
	w.log.Info("profiler listening", "addr", ln.Addr().String())
	return nil
}

// The sampling of the mutex and block profiles with the profiler on: one
// contended lock in 10, one blocking event per millisecond spent blocked.
const (
	profileMutexFraction = 10
	profileBlockRate     = int(time.Millisecond)
)

// profilerServer serves Go's profiler; net/http's own messages go to log.
func profilerServer(log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: httpErrorLog(log.With("component", "pprof"))}
}

// httpErrorLog is a net/http server's ErrorLog: each of its own messages
// (a panic in a handler, a failed TLS handshake, an accept error) becomes one
// JSON line, "http server" with the text under detail, as the gateway's
// fasthttp messages do, rather than a plain line on standard error.
func httpErrorLog(l *slog.Logger) *log.Logger {
	return log.New(logWriter(func(text string) { l.Warn("http server", "detail", text) }), "", 0)
}

// logWriter passes each message written to it, trimmed, to its function.
type logWriter func(text string)

func (f logWriter) Write(p []byte) (int, error) {
	f(strings.TrimSpace(string(p)))
	return len(p), nil
}

// redisLogger sends go-redis's own messages (a pool that cannot dial, a
// connection dropped) to slog, one JSON line each, "redis client" with the
// text under detail, rather than its default plain lines on standard
// error.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, "redis client", "detail", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// printBootstrapChange is printAdminChange for a start of the service: the
// generated credentials are shown only on a terminal. Elsewhere the change
// is printed without them, and a warning says that credentials were
// generated (which ones, never their values) and how to get usable ones:
// `facturad admin-reset`, which prints new ones to whoever runs it.
func (w *wiring) printBootstrapChange(stdout io.Writer, ch tenant.AdminChange, terminal bool) {
	if terminal || len(ch.Generated) == 0 {
		printAdminChange(stdout, ch)
		return
	}
	generated := ch.Generated
	ch.Generated = nil
	ch.Credentials.Contrasena, ch.Credentials.APIToken = "", ""
	printAdminChange(stdout, ch)
	w.log.Warn("bootstrap admin credentials were generated and not shown: standard output is not a terminal, and may be a kept log; "+
		"to log in, run `facturad admin-reset` with the service's store settings, which prints new ones "+
		"(docs/operations.md, \"Recover admin access\"), or set "+w.c.name("admin_password")+" and "+w.c.name("admin_token")+" and start again",
		"usuario", ch.Credentials.Usuario, "generated", generated)
}

// printAdminChange says what happened to the bootstrap admin and shows the
// generated credentials the one time they exist in clear; never what the
// operator configured (it already knows them, and output may be collected).
func printAdminChange(w io.Writer, ch tenant.AdminChange) {
	u := ch.Credentials.Usuario
	switch {
	case ch.Created:
		fmt.Fprintf(w, "bootstrap admin created: usuario %s\n", u)
	case ch.Changed():
		var parts []string
		if ch.PasswordSet {
			parts = append(parts, "contrasena replaced")
		}
		if ch.TokenSet {
			parts = append(parts, "apiToken replaced")
		}
		if ch.Reactivated {
			parts = append(parts, "switched on again")
		}
		fmt.Fprintf(w, "bootstrap admin %s: %s\n", u, strings.Join(parts, "; "))
	default:
		fmt.Fprintf(w, "bootstrap admin %s: already has the configured credentials\n", u)
	}
	if len(ch.Generated) == 0 {
		return
	}
	fmt.Fprintln(w, "generated credentials, shown only this once:")
	for _, g := range ch.Generated {
		switch g {
		case "contrasena":
			fmt.Fprintf(w, "  contrasena: %s\n", ch.Credentials.Contrasena)
		case "apiToken":
			fmt.Fprintf(w, "  apiToken:   %s\n", ch.Credentials.APIToken)
		}
	}
}

func storeName(c Config) string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite " + embeddedStorePath(c)
}

// storeWithDocuments is what the service needs of a store: both adapters
// keep tenants and documents.
type storeWithDocuments interface {
	tenant.Store
	tenant.DocumentStore
	tenant.DocumentLister
	tenant.KeyStore
	tenant.StateStore
	tenant.WebhookStore
	tenant.EmailStore
	tenant.TenantEventStore
	tenant.UsageStore
}

// answerTrust is what the tax authority's signed answers are checked
// against: the authorities their chain must reach (and may pass through)
// and the identification their signing certificate must carry ("" for
// any).
type answerTrust struct {
	roots, intermediates *x509.CertPool
	signer               string
	// suppliers is the national PKI suppliers' certificates are checked
	// against on received documents (staging and production), nil
	// elsewhere.
	suppliers *trust.National
}

// defaultAnswerTrust is the trust in the real service's answers when no
// bundle is configured: for staging and production, the national PKI and
// the Ministerio de Hacienda's identification; for a sandbox reached
// elsewhere, none. Staging and production check suppliers' certificates
// against the national PKI too.
func defaultAnswerTrust(c Config, roots *x509.CertPool) (answerTrust, error) {
	t := answerTrust{roots: roots}
	real := c.HaciendaEnv == "staging" || c.HaciendaEnv == "production"
	if real {
		n, err := trust.NationalPKI()
		if err != nil {
			return t, err
		}
		t.suppliers = n
		if roots == nil {
			t.roots, t.intermediates = n.Roots, n.Intermediates
		}
	}
	switch {
	case c.HaciendaAnswerSigner == "any":
	case c.HaciendaAnswerSigner != "":
		t.signer = c.HaciendaAnswerSigner
	case real:
		t.signer = trust.MinistryIdentification
	}
	return t, nil
}

// openHacienda returns the tax-authority client and the trust its signed
// answers are checked against (defaultAnswerTrust, over roots from
// hacienda_trust_bundle). On the built-in sandbox environment with no
// override, it first starts the sandbox in process on a loopback port,
// requiring signing certificates to chain to sandboxCAs (any when nil), so
// that the client speaks the real protocol to it, and trusts the sandbox's
// own answer certificate and identification. On the embedded store the
// sandbox keeps what it received, and its answer certificate, in
// data_dir (sandboxStatePath), so that a restart forgets nothing.
func openHacienda(ctx context.Context, c Config, roots, sandboxCAs *x509.CertPool, log *slog.Logger, reg *prometheus.Registry, stop *cleanups) (_ haciendaClients, _ answerTrust, sandboxRoot string, _ error) {
	answerT, err := defaultAnswerTrust(c, roots)
	if err != nil {
		return haciendaClients{}, answerT, "", fmt.Errorf("trust for the tax authority's answers: %w", err)
	}
	o := recepcion.Options{
		Environment: recepcion.Environment(c.HaciendaEnv),
		APIURL:      c.HaciendaAPI,
		TokenURL:    c.HaciendaToken,
		Logger:      log,
		Registerer:  reg,
	}
	if builtInSandbox(c) {
		// Its admin endpoints (faults, received documents) are for tests and
		// load runs of a standalone sandbox: here nobody needs them, so they
		// are closed with a token no one knows.
		adminToken := make([]byte, 32)
		if _, err := rand.Read(adminToken); err != nil {
			return haciendaClients{}, answerT, "", err
		}
		checks := sandbox.DefaultChecksTrusting(sandboxCAs)
		statePath := ""
		if c.DatabaseURL == "" {
			statePath = sandboxStatePath(c)
		}
		state, answers, err := openSandboxState(ctx, statePath)
		if err != nil {
			return haciendaClients{}, answerT, "", fmt.Errorf("built-in sandbox: %w", err)
		}
		if state != nil {
			stop.add("sandbox state", func(context.Context) error { return state.Close() })
		}
		if answers.Profile, err = sandbox.ParseAnswerProfile(c.SandboxAnswerProfile); err != nil {
			return haciendaClients{}, answerT, "", err
		}
		// The built-in sandbox's answers are trusted, with or without a
		// configured bundle, and must carry its own identification.
		if answerT.roots == nil {
			answerT.roots = x509.NewCertPool()
		}
		answerT.roots.AddCert(answers.Root())
		if c.HaciendaAnswerSigner == "" {
			id, err := signer.CertificateIdentification(answers.Certificate())
			if err != nil {
				return haciendaClients{}, answerT, "", fmt.Errorf("built-in sandbox: %w", err)
			}
			answerT.signer = id.Numero
		}
		so := sandbox.Options{
			Logger:          log.With("component", "sandbox"),
			AdminToken:      hex.EncodeToString(adminToken),
			AnswerSigner:    answers,
			ProcessingDelay: c.SandboxDelay,
			Checks:          &checks,
			// Judged against its simulated registries, as the tax
			// authority judges (docs/sandbox-registry.md).
			RegistryChecks: true,
			RegistryLimit:  sandbox.RealRegistryLimit(),
			MaxDocuments:   builtInSandboxDocuments,
		}
		if state != nil {
			so.Store = state
		}
		sb, err := sandbox.Listen("127.0.0.1:0", so)
		if err != nil {
			return haciendaClients{}, answerT, "", fmt.Errorf("built-in sandbox: %w", err)
		}
		stop.add("sandbox", sb.Close)
		kept := "memory only: the store is PostgreSQL"
		if state != nil {
			kept = state.Path()
		}
		log.Info("built-in tax-authority sandbox", "api", sb.APIURL(), "token", sb.TokenURL(), "state", kept)
		o.APIURL, o.TokenURL = sb.APIURL(), sb.TokenURL()
		sandboxRoot = sb.RegistryURL()
	}
	clients, err := newHaciendaClients(c, o, stop)
	if err != nil {
		return haciendaClients{}, answerT, "", err
	}
	// Answers left without roots (Config.answersUnanchored) are warned
	// of at start (Config.warnings).
	return clients, answerT, sandboxRoot, nil
}

// haciendaClients are the clients of the tax authority's environments the
// companies issue in: every company's documents go to def on the
// sandbox; in staging and production each environment has its own client
// (A.14), def being the one hacienda_env names.
type haciendaClients struct {
	def *recepcion.Client
	// byAmbiente is empty on the sandbox.
	byAmbiente map[string]*recepcion.Client
}

// submitters is byAmbiente as the pipeline takes it.
func (h haciendaClients) submitters() map[string]pipeline.Submitter {
	m := make(map[string]pipeline.Submitter, len(h.byAmbiente))
	for a, c := range h.byAmbiente {
		m[a] = c
	}
	return m
}

// newHaciendaClients makes the clients: one from o on the sandbox; in
// staging and production one per environment, each at its own endpoints
// (hacienda_<env>_api_url, else the real ones), hacienda_api_url winning
// for hacienda_env's own, their metrics labelled with the environment.
func newHaciendaClients(c Config, o recepcion.Options, stop *cleanups) (haciendaClients, error) {
	open := func(o recepcion.Options) (*recepcion.Client, error) {
		client, err := recepcion.New(o)
		if err != nil {
			return nil, fmt.Errorf("tax-authority client: %w", err)
		}
		stop.add("hacienda client "+string(o.Environment), client.Close)
		return client, nil
	}
	if c.HaciendaEnv == "sandbox" {
		client, err := open(o)
		return haciendaClients{def: client}, err
	}
	h := haciendaClients{byAmbiente: map[string]*recepcion.Client{}}
	for _, e := range []struct {
		ambiente   string
		env        recepcion.Environment
		api, token string
	}{
		{tenant.AmbientePruebas, recepcion.Staging, c.HaciendaStagingAPI, c.HaciendaStagingToken},
		{tenant.AmbienteProduccion, recepcion.Production, c.HaciendaProductionAPI, c.HaciendaProductionToken},
	} {
		eo := o
		eo.Environment, eo.APIURL, eo.TokenURL = e.env, e.api, e.token
		if e.env == recepcion.Environment(c.HaciendaEnv) && c.HaciendaAPI != "" {
			eo.APIURL, eo.TokenURL = c.HaciendaAPI, c.HaciendaToken
		}
		if o.Registerer != nil {
			eo.Registerer = prometheus.WrapRegistererWith(prometheus.Labels{"ambiente": e.ambiente}, o.Registerer)
		}
		client, err := open(eo)
		if err != nil {
			return haciendaClients{}, err
		}
		h.byAmbiente[e.ambiente] = client
		if e.env == recepcion.Environment(c.HaciendaEnv) {
			h.def = client
		}
	}
	return h, nil
}

// openStore opens PostgreSQL or the embedded SQLite file, and the master key
// that goes with it.
func openStore(ctx context.Context, c Config, stop *cleanups) (storeWithDocuments, []byte, error) {
	if c.DatabaseURL != "" {
		key, err := seal.ParseMasterKey(c.MasterKey)
		if err != nil {
			return nil, nil, fmt.Errorf("master key: %w", err)
		}
		s, err := postgres.Open(ctx, c.DatabaseURL, postgres.Options{})
		if err != nil {
			return nil, nil, err
		}
		stop.add("postgres", func(context.Context) error { return s.Close() })
		if c.Migrate {
			if err := s.Migrate(ctx); err != nil {
				return nil, nil, err
			}
		}
		return s, key, nil
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data folder: %w", err)
	}
	var key []byte
	if c.MasterKey != "" {
		k, err := seal.ParseMasterKey(c.MasterKey)
		if err != nil {
			return nil, nil, fmt.Errorf("master key: %w", err)
		}
		key = k
	} else {
		k, err := seal.LoadOrCreateMasterKey(c.DataDir)
		if err != nil {
			return nil, nil, fmt.Errorf("master key: %w", err)
		}
		key = k
	}
	s, err := sqlite.Open(ctx, embeddedStorePath(c), sqlite.Options{})
	if err != nil {
		return nil, nil, err
	}
	stop.add("sqlite", func(context.Context) error { return s.Close() })
	return s, key, nil
}

// openRedis connects to Redis with short timeouts: every caller bounds its
// own calls too, because a blackholed Redis would otherwise hold a request
// until its deadline. go-redis's own messages go to log (its logger is one
// for the whole process).
func openRedis(url string, log *slog.Logger) (*redis.Client, error) {
	redis.SetLogger(redisLogger{log})
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("cannot be parsed") // the URL may hold a password
	}
	o.DialTimeout = 500 * time.Millisecond
	o.ReadTimeout = 250 * time.Millisecond
	o.WriteTimeout = 250 * time.Millisecond
	o.PoolTimeout = 250 * time.Millisecond
	o.ContextTimeoutEnabled = true // honour each caller's own deadline
	return redis.NewClient(o), nil
}

// loadTrustBundle reads a PEM file of certificate authorities; an empty
// path is none.
func loadTrustBundle(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trust bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("trust bundle %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// builtInSandboxDocuments bounds the documents the built-in sandbox keeps,
// in memory and in its file, the oldest forgotten first: about 18 KB each
// in the file (a signed document, its answer and what the sandbox read of
// it), some 360 MB at most beside the service's own store in data_dir
// (decision 179).
const builtInSandboxDocuments = 20_000

// sandboxStatePath is the built-in sandbox's file in data_dir: the
// documents it received, their verdicts and its answer certificate.
func sandboxStatePath(c Config) string { return filepath.Join(c.DataDir, sandboxStateFile) }

// sandboxStateFile is the name of a sandbox's file in its data folder,
// serve's data_dir or facturad sandbox's --data-dir.
const sandboxStateFile = "sandbox.db"

// embeddedStorePath is the embedded store's file in data_dir.
func embeddedStorePath(c Config) string { return filepath.Join(c.DataDir, "facturad.db") }

// requireEmbeddedStore refuses to go on unless the embedded store exists
// already: a command that works on the service's data would otherwise take a
// mistyped data_dir for a new, empty store.
func requireEmbeddedStore(c Config) error {
	if _, err := os.Stat(embeddedStorePath(c)); err != nil {
		return fmt.Errorf("embedded store: %w (is %s the service's?)", err, c.name("data_dir"))
	}
	return nil
}
