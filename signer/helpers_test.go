package signer

import (
	"crypto/x509"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenTime is the fixed signing time of the golden files.
var goldenTime = time.Date(2025, 9, 15, 10, 30, 0, 0, time.FixedZone("", -6*60*60))

const (
	fixtureP12   = "testdata/fixture.p12"
	fixtureCAPEM = "testdata/fixture-ca.pem"
	fixturePIN   = "1234"
	xsdDir       = "../hacienda/testdata/xsd/2024/v4.4"
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

// tool finds an external program. Under TEST_REQUIRE_SERVICES=1 a missing
// program fails the test; otherwise the test is skipped.
func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("TEST_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s not found and TEST_REQUIRE_SERVICES=1: %v", name, err)
		}
		t.Skipf("%s not installed (set TEST_REQUIRE_SERVICES=1 to make this a failure)", name)
	}
	return p
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// xmlsecVerify runs Debian's xmlsec1 over the signed document. The key must
// come from the X509 certificate (not the KeyValue) and the certificate must
// chain to caPEM; the XAdES SignedProperties element's Id is declared as an
// ID so that its reference resolves.
func xmlsecVerify(t testing.TB, signed []byte, caPEM string) error {
	t.Helper()
	bin := tool(t, "xmlsec1")
	f := writeTemp(t, "signed.xml", signed)
	cmd := exec.Command(bin, "--verify",
		"--id-attr:Id", NamespaceXAdES+":SignedProperties",
		"--enabled-key-data", "x509",
		"--trusted-pem", caPEM,
		f)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), "SignedInfo References (ok/all): 3/3") {
		return errors.New("xmlsec1 did not check 3 references: " + string(out))
	}
	return nil
}

// xsdValidate validates a document against the official v4.4 schema of its
// root element.
func xsdValidate(t testing.TB, doc []byte) error {
	t.Helper()
	bin := tool(t, "xmllint")
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		return err
	}
	schema := filepath.Join(xsdDir, d.Root().Tag+"_V4.4.xsd")
	if _, err := os.Stat(schema); err != nil {
		t.Fatalf("no schema for %s: %v", d.Root().Tag, err)
	}
	f := writeTemp(t, "doc.xml", doc)
	out, err := exec.Command(bin, "--noout", "--nonet", "--schema", schema, f).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	return nil
}

func x509CertPool(t testing.TB, pemBytes []byte) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in PEM")
	}
	return p
}
