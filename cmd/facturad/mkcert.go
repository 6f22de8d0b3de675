package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"facturad/signer/certmint"
)

// runMkcert mints a throwaway CA and a company certificate shaped like a
// Costa Rican "llave criptográfica" into a .p12 file, and prints its PIN.
// The certificate is for the sandbox and tests only.
func runMkcert(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("facturad mkcert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tipo := fs.String("tipo", "02", "identification type: 01 física, 02 jurídica, 03 DIMEX, 04 NITE")
	id := fs.String("id", "", "identification digits (required), e.g. 3101123456")
	name := fs.String("name", "", "holder's name (default: EMPRESA DE PRUEBAS <id>)")
	pin := fs.String("pin", "", "4-digit PIN (default: random)")
	out := fs.String("out", "", "output .p12 file (default: <id>.p12)")
	days := fs.Int("days", 730, "validity in days")
	legacy := fs.Bool("legacy", false, "encode with the legacy 3DES/RC2 algorithms")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *id == "" {
		fs.Usage()
		return errors.New("mkcert: -id is required")
	}
	if *name == "" {
		*name = "EMPRESA DE PRUEBAS " + *id
	}
	if *out == "" {
		*out = *id + ".p12"
	}
	now := time.Now()
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: *tipo,
		Identificacion:     *id,
		Name:               *name,
		PIN:                *pin,
		NotBefore:          now.Add(-time.Hour),
		NotAfter:           now.Add(time.Duration(*days) * 24 * time.Hour),
		Legacy:             *legacy,
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, m.P12, 0o600); err != nil {
		return fmt.Errorf("mkcert: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (subject %q, expires %s)\nPIN: %s\n",
		*out, m.Leaf.Subject.String(), m.Leaf.NotAfter.Format(time.RFC3339), m.PIN)
	return err
}
