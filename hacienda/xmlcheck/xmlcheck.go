// Package xmlcheck runs the independent checkers the tests trust more than
// our own code: xmllint against the official v4.4 schemas, and xmlsec1 over
// an XAdES signature. Any package's tests may use it.
//
// A missing tool skips the test, unless TEST_REQUIRE_SERVICES=1 (set by
// deploy/test.sh), which makes it a failure so that CI can never pass by
// skipping.
package xmlcheck

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// NamespaceXAdES is the namespace of xades:SignedProperties, whose Id
// attribute xmlsec1 must be told about.
const NamespaceXAdES = "http://uri.etsi.org/01903/v1.3.2#"

// Tool returns the path of an external tool, or skips (fails, under
// TEST_REQUIRE_SERVICES=1) when it is not installed.
func Tool(t testing.TB, name string) string {
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

// SchemaDir is the folder holding the official v4.4 schemas shipped with
// the project (hacienda/testdata/xsd/2024/v4.4).
func SchemaDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "xsd", "2024", "v4.4")
}

// Schema returns the path of the official schema of a root element, such
// as "FacturaElectronica" or "MensajeHacienda".
func Schema(root string) string {
	return filepath.Join(SchemaDir(), root+"_V4.4.xsd")
}

// XSD validates doc with xmllint against the official schema of root. The
// error holds xmllint's own words.
func XSD(t testing.TB, root string, doc []byte) error {
	t.Helper()
	bin := Tool(t, "xmllint")
	f := writeTemp(t, "doc.xml", doc)
	out, err := exec.Command(bin, "--noout", "--nonet", "--schema", Schema(root), f).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	return nil
}

// XMLSec verifies an enveloped XAdES signature with xmlsec1: the key must
// come from the X509 certificate (not the KeyValue), the certificate must
// chain to the PEM file caPEM, and all three references (document, KeyInfo,
// SignedProperties) must be checked.
func XMLSec(t testing.TB, signed []byte, caPEM string) error {
	t.Helper()
	bin := Tool(t, "xmlsec1")
	f := writeTemp(t, "signed.xml", signed)
	out, err := exec.Command(bin, "--verify",
		"--id-attr:Id", NamespaceXAdES+":SignedProperties",
		"--enabled-key-data", "x509",
		"--trusted-pem", caPEM,
		f).CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), "SignedInfo References (ok/all): 3/3") {
		return errors.New("xmlsec1 did not check 3 references: " + string(out))
	}
	return nil
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
