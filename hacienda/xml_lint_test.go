package hacienda

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// xsdDir holds the official v4.4 schemas, copied unchanged (see its README).
const xsdDir = "testdata/xsd/2024/v4.4"

// xmllint returns the path of the xmllint binary. Without it the test is
// skipped, unless TEST_REQUIRE_SERVICES is set: then it fails, so that a CI
// run can never pass by skipping schema validation.
func xmllint(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("TEST_REQUIRE_SERVICES") != "" {
			t.Fatalf("xmllint is required (TEST_REQUIRE_SERVICES is set) but was not found: %v", err)
		}
		t.Skip("xmllint not found; install libxml2-utils or set TEST_REQUIRE_SERVICES=1 to make this a failure")
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

// withPlaceholderSignature inserts placeholderSignature before the closing
// tag of the root element.
func withPlaceholderSignature(t testing.TB, doc []byte) []byte {
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

// xsdResult is the outcome of validating one document.
type xsdResult struct {
	Name   string
	Valid  bool
	Output string // xmllint's messages about this document
}

// validateXSD checks every document against the schema file xsdName (a file
// name in xsdDir) with one xmllint run, and reports per document. Documents
// are validated as given: callers that validate unsigned documents add
// withPlaceholderSignature first.
func validateXSD(t testing.TB, xsdName string, docs map[string][]byte) []xsdResult {
	t.Helper()
	bin := xmllint(t)
	schema, err := filepath.Abs(filepath.Join(xsdDir, xsdName))
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
	res := make([]xsdResult, 0, len(names))
	for _, name := range names {
		p := paths[name]
		r := xsdResult{Name: name}
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

// requireValid fails the test for each document that does not validate.
func requireValid(t testing.TB, xsdName string, docs map[string][]byte) {
	t.Helper()
	for _, r := range validateXSD(t, xsdName, docs) {
		if !r.Valid {
			t.Errorf("%s does not validate against %s:%s", r.Name, xsdName, r.Output)
		}
	}
}

func TestXSDHelperCatchesErrors(t *testing.T) {
	// A minimal answer message is valid once it carries a signature; copies
	// without it, with two elements swapped or with an exponent must be refused.
	good := []byte(`<?xml version="1.0" encoding="utf-8"?>` +
		`<MensajeHacienda xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda">` +
		`<Clave>50615092500310112345600100001010000000123112345678</Clave>` +
		`<NombreEmisor>EMPRESA DE EJEMPLO</NombreEmisor><TipoIdentificacionEmisor>02</TipoIdentificacionEmisor>` +
		`<NumeroCedulaEmisor>3101123456</NumeroCedulaEmisor><Mensaje>1</Mensaje><EstadoMensaje>Aceptado</EstadoMensaje>` +
		`<DetalleMensaje>ok</DetalleMensaje><TotalFactura>100</TotalFactura></MensajeHacienda>`)
	swapped := bytes.Replace(good,
		[]byte(`<Mensaje>1</Mensaje><EstadoMensaje>Aceptado</EstadoMensaje>`),
		[]byte(`<EstadoMensaje>Aceptado</EstadoMensaje><Mensaje>1</Mensaje>`), 1)
	res := validateXSD(t, "MensajeHacienda_V4.4.xsd", map[string][]byte{
		"good":        withPlaceholderSignature(t, good),
		"swapped":     withPlaceholderSignature(t, swapped),
		"unsigned":    good,
		"bad amounts": withPlaceholderSignature(t, bytes.Replace(good, []byte(">100<"), []byte(">1e2<"), 1)),
	})
	for _, r := range res {
		if want := r.Name == "good"; r.Valid != want {
			t.Errorf("%s: valid = %v, want %v (%s)", r.Name, r.Valid, want, r.Output)
		}
	}
}
