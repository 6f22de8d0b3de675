package main

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"facturad/hacienda/sandbox"
	"facturad/hacienda/sandbox/sqlitestate"
)

// runSandbox runs the tax-authority sandbox alone, for load tests and for
// other services to test against (point them at the printed URLs; for a
// facturad elsewhere, FACTURAD_HACIENDA_API_URL and _TOKEN_URL, and the
// registry URL for FACTURAD_REGISTRY_URL). It judges documents against its
// simulated registries and limits their calls as the tax authority does.
//
// With --data-dir it keeps the documents it received, its verdicts and its
// answer certificate in sandbox.db there, as serve's built-in sandbox does
// in data_dir, and a start on that folder knows them (decision 189);
// without it, in memory only.
func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := newCommandFlags("sandbox", stdout, stderr, nil)
	listen := fs.String("listen", ":8090", "listen address")
	delay := fs.Duration("delay", sandbox.DefaultProcessingDelay, "processing delay before a document gets its verdict (0 for benchmarks; PUT /_sandbox/processing-delay changes it while running)")
	adminToken := fs.String("admin-token", "", "bearer token required on /_sandbox/ (prefer the environment variable to the flag)")
	fs.Env("admin-token", "FACTURAD_SANDBOX_ADMIN_TOKEN")
	fs.DefaultIs("admin-token", "none, /_sandbox/ is open")
	seed := fs.Uint64("seed", 0, "seed of the fault injection's random choices, printed at start; give the printed one to repeat a run")
	fs.DefaultIs("seed", "random")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	trusted := fs.String("trusted-ca", "", "PEM file of the authorities documents' signing certificates must chain to")
	fs.DefaultIs("trusted-ca", "any authority")
	answerCA := fs.String("answer-ca-out", "", "write the PEM certificate of the authority the sandbox's signed answers chain to into this file, for a service's --hacienda-trust-bundle")
	fs.DefaultIs("answer-ca-out", "not written")
	profile := fs.String("answer-profile", "hacienda", "how answers are signed: hacienda (XAdES-BES, as the tax authority signs) or service (XAdES-EPES, as facturad signs documents)")
	xsdDir := fs.String("xsd-dir", "", "folder of the official v4.4 schemas (hacienda/testdata/xsd/2024/v4.4): validate every document with xmllint too")
	fs.DefaultIs("xsd-dir", "none, the strict reader only")
	dataDir := fs.String("data-dir", "", "folder where the sandbox keeps the documents it received, its verdicts and its answer certificate (sandbox.db, as serve's built-in sandbox in its data_dir), so that a restart, a crash included, forgets none; at most "+
		fmt.Sprintf("%d,%03d", builtInSandboxDocuments/1000, builtInSandboxDocuments%1000)+" documents there, the oldest forgotten first. Not a folder a running service's built-in sandbox uses")
	fs.Env("data-dir", "FACTURAD_SANDBOX_DATA_DIR")
	fs.DefaultIs("data-dir", "none, memory only: a restart forgets every document")
	if err := fs.ParseEnv(args, getenv); err != nil {
		return err
	}
	if *seed == 0 {
		*seed = rand.Uint64()
	}
	if _, err := parseLevel(*logLevel); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	roots, err := loadTrustBundle(*trusted)
	if err != nil {
		return fmt.Errorf("--trusted-ca: %w", err)
	}
	checks := sandbox.DefaultChecksTrusting(roots)
	if *xsdDir != "" {
		xsd, err := sandbox.NewXSDCheck(*xsdDir)
		if err != nil {
			return err
		}
		checks.Schema = sandbox.AllOf(checks.Schema, xsd)
	}
	statePath := ""
	if *dataDir != "" {
		if err := os.MkdirAll(*dataDir, 0o700); err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		statePath = filepath.Join(*dataDir, sandboxStateFile)
	}
	// With a folder, the certificate kept in it, so that a service
	// trusting the --answer-ca-out of an earlier start trusts this one's
	// answers.
	state, answers, err := openSandboxState(ctx, statePath)
	if err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	if state != nil {
		defer state.Close()
	}
	if answers.Profile, err = sandbox.ParseAnswerProfile(*profile); err != nil {
		return fmt.Errorf("--answer-profile: %w", err)
	}
	if *answerCA != "" {
		root := answers.Root()
		if err := os.WriteFile(*answerCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw}), 0o644); err != nil {
			return fmt.Errorf("--answer-ca-out: %w", err)
		}
	}
	o := sandbox.Options{
		AnswerSigner:    answers,
		Checks:          &checks,
		ProcessingDelay: *delay,
		AdminToken:      *adminToken,
		Seed:            *seed,
		RegistryChecks:  true,
		RegistryLimit:   sandbox.RealRegistryLimit(),
		Logger:          newLogger(stderr, *logLevel),
	}
	kept := "memory only"
	if state != nil {
		// The built-in sandbox's bound, for the same reason: the file
		// would otherwise grow to gigabytes (decision 179).
		o.Store, o.MaxDocuments = state, builtInSandboxDocuments
		kept = state.Path()
	}
	s, err := sandbox.Listen(*listen, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox listening: api %s  token %s  seed %d  registry %s  state %s\n", s.APIURL(), s.TokenURL(), *seed, s.RegistryURL(), kept)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.Close(sctx)
}

// openSandboxState opens a sandbox's kept state at path (sandbox.db) and
// the answer signer kept in it, made and kept on first use. An empty path
// keeps nothing: the state is nil and the signer new, in memory.
func openSandboxState(ctx context.Context, path string) (*sqlitestate.Store, *sandbox.CertificateSigner, error) {
	if path == "" {
		answers, err := sandbox.DefaultAnswerSigner()
		return nil, answers, err
	}
	state, err := sqlitestate.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	answers, err := state.AnswerSigner(ctx, sandbox.DefaultAnswerSigner)
	if err != nil {
		return nil, nil, errors.Join(err, state.Close())
	}
	return state, answers, nil
}
