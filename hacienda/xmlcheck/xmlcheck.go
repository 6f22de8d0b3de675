// Package xmlcheck runs the independent checkers the tests trust more than
// our own code: xmllint against the official v4.4 schemas, and xmlsec1 over
// an XAdES signature. Any package's tests may use it.
//
// A missing tool skips the test, unless TEST_REQUIRE_SERVICES is on (1,
// true or yes; deploy/test.sh sets 1), which makes it a failure so that CI
// can never pass by skipping. A value of it that is neither on nor off
// (deploy/testenv) fails every test that asks for a tool.
package xmlcheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"facturad/deploy/testenv"
)

// NamespaceXAdES is the namespace of xades:SignedProperties, whose Id
// attribute xmlsec1 must be told about.
const NamespaceXAdES = "http://uri.etsi.org/01903/v1.3.2#"

// Tool returns the path of an external tool, or skips (fails, when
// TEST_REQUIRE_SERVICES is on) when it is not installed.
func Tool(t testing.TB, name string) string {
	t.Helper()
	required := testenv.RequireServices(t)
	p, err := exec.LookPath(name)
	if err != nil {
		if required {
			t.Fatalf("%s not found and %s is on: %v", name, testenv.RequireServicesVar, err)
		}
		t.Skipf("%s not installed (set %s=1 to make this a failure)", name, testenv.RequireServicesVar)
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
	return XMLSecReferences(t, signed, caPEM, 3)
}

// XMLSecReferences is XMLSec for a signature of refs references (two for
// the tax authority's profile: the document and SignedProperties).
func XMLSecReferences(t testing.TB, signed []byte, caPEM string, refs int) error {
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
	if want := fmt.Sprintf("SignedInfo References (ok/all): %d/%d", refs, refs); !strings.Contains(string(out), want) {
		return fmt.Errorf("xmlsec1 did not check %d references: %s", refs, out)
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

// placeholderSignature is a structurally valid, cryptographically
// meaningless ds:Signature. Every v4.4 schema requires one as the last child
// of the root; appending it lets an unsigned document be checked against the
// schema without accepting any schema error.
const placeholderSignature = `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">` +
	`<ds:SignedInfo>` +
	`<ds:CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>` +
	`<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>` +
	`<ds:Reference URI=""><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>` +
	`<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference>` +
	`</ds:SignedInfo>` +
	`<ds:SignatureValue>AAAA</ds:SignatureValue>` +
	`</ds:Signature>`

// WithPlaceholderSignature inserts placeholderSignature before the closing
// tag of the root element.
func WithPlaceholderSignature(t testing.TB, doc []byte) []byte {
	t.Helper()
	trimmed := bytes.TrimRight(doc, " \r\n\t")
	i := bytes.LastIndex(trimmed, []byte("</"))
	if i < 0 {
		t.Fatalf("document has no closing root tag")
	}
	out := make([]byte, 0, len(doc)+len(placeholderSignature))
	out = append(out, trimmed[:i]...)
	out = append(out, placeholderSignature...)
	return append(out, trimmed[i:]...)
}

// Result is the outcome of validating one document of a Batch.
type Result struct {
	Name   string
	Valid  bool
	Output string // xmllint's messages about this document
}

// Batch checks every document against the schema file xsdName (a file
// name in SchemaDir, such as "FacturaElectronica_V4.4.xsd") with one
// xmllint run, and reports per document. Documents are validated as given:
// callers that validate unsigned documents add WithPlaceholderSignature
// first.
func Batch(t testing.TB, xsdName string, docs map[string][]byte) []Result {
	t.Helper()
	bin := Tool(t, "xmllint")
	schema, err := filepath.Abs(filepath.Join(SchemaDir(), xsdName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(schema); err != nil {
		t.Fatalf("schema %s: %v", xsdName, err)
	}
	dir := t.TempDir()
	args := []string{"--nonet", "--noout", "--schema", schema}
	names := make([]string, 0, len(docs))
	paths := map[string]string{}
	for name, b := range docs {
		p := filepath.Join(dir, fmt.Sprintf("doc%04d.xml", len(names)))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		paths[name] = p
		args = append(args, p)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run xmllint: %v", err)
		}
	}
	if bytes.Contains(out, []byte("WXS schema")) && bytes.Contains(out, []byte("failed to compile")) {
		t.Fatalf("schema %s did not compile:\n%s", xsdName, out)
	}
	lines := strings.Split(string(out), "\n")
	res := make([]Result, 0, len(names))
	for _, name := range names {
		p := paths[name]
		r := Result{Name: name}
		var msgs []string
		for _, l := range lines {
			if !strings.HasPrefix(l, p) {
				continue
			}
			if l == p+" validates" {
				r.Valid = true
				continue
			}
			msgs = append(msgs, strings.TrimPrefix(l, p))
		}
		r.Output = strings.Join(msgs, "\n")
		res = append(res, r)
	}
	return res
}

// RequireValid fails the test for each document that does not validate.
func RequireValid(t testing.TB, xsdName string, docs map[string][]byte) {
	t.Helper()
	for _, r := range Batch(t, xsdName, docs) {
		if !r.Valid {
			t.Errorf("%s does not validate against %s:%s", r.Name, xsdName, r.Output)
		}
	}
}
