package main

import (
	"context"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"facturad/hacienda/sandbox"
)

// runSandbox runs the tax-authority sandbox alone, for load tests and for
// other services to test against (point them at the printed URLs; for a
// facturad elsewhere, FACTURAD_HACIENDA_API_URL and _TOKEN_URL).
func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("facturad sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setUsage(fs, "sandbox", nil)
	listen := fs.String("listen", ":8090", "listen address")
	delay := fs.Duration("delay", sandbox.DefaultProcessingDelay, "processing delay before a document gets its verdict (0 for benchmarks; PUT /_sandbox/processing-delay changes it while running)")
	adminToken := fs.String("admin-token", getenv("FACTURAD_SANDBOX_ADMIN_TOKEN"), "bearer token required on /_sandbox/ (default: open)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the fault injection")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	trusted := fs.String("trusted-ca", "", "PEM file of the authorities documents' signing certificates must chain to (default: any)")
	answerCA := fs.String("answer-ca-out", "", "write the PEM certificate of the authority the sandbox's signed answers chain to into this file, for a service's --hacienda-trust-bundle (default: not written)")
	xsdDir := fs.String("xsd-dir", "", "folder of the official v4.4 schemas (hacienda/testdata/xsd/2024/v4.4): validate every document with xmllint too (default: the strict reader only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := parseLevel(*logLevel); err != nil {
		return err
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
		Logger:          newLogger(stderr, *logLevel),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox listening: api %s  token %s\n", s.APIURL(), s.TokenURL())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.Close(sctx)
}
