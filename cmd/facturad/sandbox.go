package main

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"facturad/hacienda/sandbox"
)

// runSandbox runs the tax-authority sandbox alone, for load tests and for
// other services to test against (point them at the printed URLs; for a
// facturad elsewhere, FACTURAD_HACIENDA_API_URL and _TOKEN_URL, and the
// registry URL for FACTURAD_REGISTRY_URL). It judges documents against its
// simulated registries and limits their calls as the tax authority does.
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
	answers, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		return err
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
	s, err := sandbox.Listen(*listen, sandbox.Options{
		AnswerSigner:    answers,
		Checks:          &checks,
		ProcessingDelay: *delay,
		AdminToken:      *adminToken,
		Seed:            *seed,
		RegistryChecks:  true,
		RegistryLimit:   sandbox.RealRegistryLimit(),
		Logger:          newLogger(stderr, *logLevel),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox listening: api %s  token %s  seed %d  registry %s\n", s.APIURL(), s.TokenURL(), *seed, s.RegistryURL())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.Close(sctx)
}
