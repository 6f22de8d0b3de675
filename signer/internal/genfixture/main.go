// Command genfixture writes the fixed test certificate the signer's golden
// tests sign with: a test CA and a company certificate (cédula jurídica
// 3101123456) under it, as testdata/fixture.p12 (PIN 1234) and
// testdata/fixture-ca.pem. The signer package runs it through go generate:
//
//	go generate ./signer
//
// Every run makes new keys, so the golden files must then be rewritten with
// go test ./signer -run TestGolden -update.
package main

import (
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"facturad/signer/certmint"
)

func main() {
	out := flag.String("out", "testdata", "folder to write fixture.p12 and fixture-ca.pem into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genfixture:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	notBefore := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, err := certmint.NewCA(certmint.CAOptions{
		NotBefore:    notBefore,
		NotAfter:     time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC),
		SerialNumber: big.NewInt(1),
	})
	if err != nil {
		return err
	}
	m, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02",
		Identificacion:     "3101123456",
		Name:               "EMPRESA DE EJEMPLO SOCIEDAD ANONIMA",
		PIN:                "1234",
		NotBefore:          notBefore,
		NotAfter:           time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC),
		CA:                 ca,
		SerialNumber:       big.NewInt(0x4a7c2e10),
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "fixture.p12"), m.P12, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "fixture-ca.pem"), ca.CertPEM(), 0o644)
}
