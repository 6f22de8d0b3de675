package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"facturad/signer/certmint"
)

// runMkcert mints a company certificate shaped like a Costa Rican "llave
// criptográfica" into a .p12 file, and prints its PIN. It is certified by a
// test CA kept in a folder (made at first use), so that a sandbox can be
// told to trust every certificate minted here (the built-in sandbox of
// facturad serve: --sandbox-trusted-ca, FACTURAD_SANDBOX_TRUSTED_CA;
// facturad sandbox: --trusted-ca). For the sandbox and tests only.
func runMkcert(args []string, stdout, stderr io.Writer) error {
	fs := newCommandFlags("mkcert", stdout, stderr, nil)
	tipo := fs.String("tipo", "02", "identification type: 01 física, 02 jurídica, 03 DIMEX, 04 NITE")
	id := fs.String("id", "", "identification digits (required), e.g. 3101123456")
	name := fs.String("name", "", "holder's name")
	fs.DefaultIs("name", "EMPRESA DE PRUEBAS <id>")
	pin := fs.String("pin", "", "4-digit PIN")
	fs.DefaultIs("pin", "random")
	out := fs.String("out", "", "output .p12 file")
	fs.DefaultIs("out", "<id>.p12")
	days := fs.Int("days", 730, "validity in days")
	legacy := fs.Bool("legacy", false, "encode with the legacy 3DES/RC2 algorithms")
	caDir := fs.String("ca-dir", "data/test-ca", "folder of the test CA (ca.pem, ca-key.pem), made at first use")
	if err := fs.ParseEnv(args, func(string) string { return "" }); err != nil {
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
	ca, made, err := testCA(*caDir)
	if err != nil {
		return fmt.Errorf("mkcert: %w", err)
	}
	now := time.Now()
	m, err := certmint.MintCertificate(certmint.Options{
		CA:                 ca,
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
	if err == nil && made {
		ca := filepath.Join(*caDir, "ca.pem")
		_, err = fmt.Fprintf(stdout, "made the test CA %s; to have a sandbox require certificates it signed: "+
			"facturad serve --sandbox-trusted-ca %s (or FACTURAD_SANDBOX_TRUSTED_CA), facturad sandbox --trusted-ca %s\n",
			*caDir, ca, ca)
	}
	return err
}

// testCA loads the test CA kept in dir, or makes and keeps one. made says
// it was made now.
func testCA(dir string) (ca *certmint.CA, made bool, err error) {
	certPath, keyPath := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	if cerr == nil && kerr == nil {
		ca, err := parseCA(certPEM, keyPEM)
		if err != nil {
			return nil, false, fmt.Errorf("test CA in %s: %w", dir, err)
		}
		return ca, false, nil
	}
	if !errors.Is(cerr, fs.ErrNotExist) || !errors.Is(kerr, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("test CA in %s: one of ca.pem and ca-key.pem is missing or unreadable (%v, %v)", dir, cerr, kerr)
	}
	if ca, err = certmint.NewCA(certmint.CAOptions{}); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	keyDER := x509.MarshalPKCS1PrivateKey(ca.Key)
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, false, err
	}
	if err := os.WriteFile(certPath, ca.CertPEM(), 0o600); err != nil {
		return nil, false, err
	}
	return ca, true, nil
}

// parseCA reads a CA certificate and its PKCS#1 RSA key.
func parseCA(certPEM, keyPEM []byte) (*certmint.CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.New("the key is not the certificate's")
	}
	return &certmint.CA{Cert: cert, Key: key}, nil
}
