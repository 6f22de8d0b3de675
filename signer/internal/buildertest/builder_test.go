package buildertest

import (
	"crypto/x509"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/signer"
)

const (
	goldenDir = "../../../hacienda/testdata/golden"
	xsdDir    = "../../../hacienda/testdata/xsd/2024/v4.4"
	p12Path   = "../../testdata/fixture.p12"
	caPath    = "../../testdata/fixture-ca.pem"
)

func tool(t *testing.T, name string) string {
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

func run(t *testing.T, name string, args ...string) error {
	t.Helper()
	out, err := exec.Command(tool(t, name), args...).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	if name == "xmlsec1" && !strings.Contains(string(out), "SignedInfo References (ok/all): 3/3") {
		return errors.New("xmlsec1 did not check 3 references: " + string(out))
	}
	return nil
}

// TestSignBuiltDocuments signs one document of every type as the builder
// writes it (the builder's pinned example of each type, parsed and built
// again by hacienda.MarshalXML) and checks the result with Verify, xmlsec1
// and the type's official schema.
func TestSignBuiltDocuments(t *testing.T) {
	p12, err := os.ReadFile(p12Path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := signer.LoadPKCS12(p12, []byte("1234"))
	if err != nil {
		t.Fatal(err)
	}
	chain := append([]*x509.Certificate{cert.Leaf}, cert.Chain...)
	at := time.Date(2025, 9, 15, 10, 30, 0, 0, time.FixedZone("", -6*60*60))

	for _, typ := range hacienda.DocumentTypes {
		t.Run("ok/"+typ.Abbrev(), func(t *testing.T) {
			t.Parallel()
			example, err := os.ReadFile(filepath.Join(goldenDir, typ.Abbrev()+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			model, err := hacienda.ParseXML(example)
			if err != nil {
				t.Fatal(err)
			}
			if model.Type != typ {
				t.Fatalf("example is of type %v", model.Type)
			}
			built, err := hacienda.MarshalXML(model)
			if err != nil {
				t.Fatal(err)
			}
			signed, err := signer.Sign(built, cert.Key, chain, signer.PolicyV44, signer.WithClock(func() time.Time { return at }))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := signer.Verify(signed); err != nil {
				t.Errorf("Verify: %v", err)
			}
			f := filepath.Join(t.TempDir(), typ.Abbrev()+".xml")
			if err := os.WriteFile(f, signed, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := run(t, "xmlsec1", "--verify", "--id-attr:Id", signer.NamespaceXAdES+":SignedProperties",
				"--enabled-key-data", "x509", "--trusted-pem", caPath, f); err != nil {
				t.Errorf("xmlsec1: %v", err)
			}
			schema := filepath.Join(xsdDir, typ.RootElement()+"_V4.4.xsd")
			if err := run(t, "xmllint", "--noout", "--nonet", "--schema", schema, f); err != nil {
				t.Errorf("xmllint: %v", err)
			}
		})
	}
}
