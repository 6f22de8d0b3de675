package signer

import (
	"crypto/x509"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"facturad/hacienda"
	"facturad/hacienda/xmlcheck"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenTime is the fixed signing time of the golden files.
var goldenTime = time.Date(2025, 9, 15, 10, 30, 0, 0, hacienda.CostaRica)

const (
	fixtureP12   = "testdata/fixture.p12"
	fixtureCAPEM = "testdata/fixture-ca.pem"
	fixturePIN   = "1234"
)

var fixtureOnce = sync.OnceValues(func() (*Certificate, error) {
	p12, err := os.ReadFile(fixtureP12)
	if err != nil {
		return nil, err
	}
	return LoadPKCS12(p12, []byte(fixturePIN))
})

// fixture is the fixed test certificate made by go generate (see
// internal/genfixture).
func fixture(t testing.TB) *Certificate {
	t.Helper()
	c, err := fixtureOnce()
	if err != nil {
		t.Fatalf("load %s (run go generate ./signer to make it): %v", fixtureP12, err)
	}
	return c
}

func fixtureChain(t testing.TB) []*x509.Certificate {
	c := fixture(t)
	return append([]*x509.Certificate{c.Leaf}, c.Chain...)
}

func pkcs12TrustStore(cert *x509.Certificate, pin string) ([]byte, error) {
	return pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{cert}, pin)
}

// xmlsecVerify runs Debian's xmlsec1 over the signed document (see
// xmlcheck.XMLSec: the key from the certificate, chained to caPEM, all
// three references checked).
func xmlsecVerify(t testing.TB, signed []byte, caPEM string) error {
	t.Helper()
	return xmlcheck.XMLSec(t, signed, caPEM)
}

// xsdValidate validates a document against the official v4.4 schema of its
// root element.
func xsdValidate(t testing.TB, doc []byte) error {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		return err
	}
	return xmlcheck.XSD(t, d.Root().Tag, doc)
}

func x509CertPool(t testing.TB, pemBytes []byte) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in PEM")
	}
	return p
}

// goldenDocs reads every document under testdata/golden, signed or not, by
// file name, with extra (name to document) beside them.
func goldenDocs(t *testing.T, extra map[string]string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = b
	}
	for name, doc := range extra {
		docs[name] = []byte(doc)
	}
	return docs
}
