package buildertest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/signer"
)

// builtInvoice returns a 10-line FacturaElectronica as the builder writes
// it: the builder's pinned FE example with its lines repeated to ten,
// recalculated and built again.
func builtInvoice(tb testing.TB) []byte {
	tb.Helper()
	example, err := os.ReadFile(filepath.Join(goldenDir, "FE.xml"))
	if err != nil {
		tb.Fatal(err)
	}
	d, err := hacienda.ParseXML(example)
	if err != nil {
		tb.Fatal(err)
	}
	src := d.DetalleServicio
	d.DetalleServicio = nil
	for i := range 10 {
		l := src[i%len(src)]
		l.Impuesto = slices.Clone(l.Impuesto)
		l.NumeroLinea = i + 1
		d.DetalleServicio = append(d.DetalleServicio, l)
	}
	// One means of payment for the new total.
	d.ResumenFactura.MedioPago = d.ResumenFactura.MedioPago[:1]
	d.ResumenFactura.MedioPago[0].TotalMedioPago = hacienda.Amount{}
	if err := hacienda.Calculate(d); err != nil {
		tb.Fatal(err)
	}
	b, err := hacienda.MarshalXML(d)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func fixture(tb testing.TB) (crypto.Signer, []*x509.Certificate) {
	tb.Helper()
	p12, err := os.ReadFile(p12Path)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := signer.LoadPKCS12(p12, []byte("1234"))
	if err != nil {
		tb.Fatal(err)
	}
	return c.Key, append([]*x509.Certificate{c.Leaf}, c.Chain...)
}

// BenchmarkSignBuilt10Lines signs a 10-line invoice as the pipeline does:
// builder output (no insignificant white space).
func BenchmarkSignBuilt10Lines(b *testing.B) {
	doc := builtInvoice(b)
	key, chain := fixture(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signer.Sign(doc, key, chain, signer.PolicyV44); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignBuilt10LinesCanonical is BenchmarkSignBuilt10Lines with
// WithCanonicalInput, as the pipeline signs.
func BenchmarkSignBuilt10LinesCanonical(b *testing.B) {
	doc := builtInvoice(b)
	key, chain := fixture(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signer.Sign(doc, key, chain, signer.PolicyV44, signer.WithCanonicalInput()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawRSA2048 repeats the signer package's floor benchmark, so both
// figures come from the same run.
func BenchmarkRawRSA2048(b *testing.B) {
	key, _ := fixture(b)
	h := sha256.Sum256([]byte("facturad"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, h[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuiltInvoice checks the benchmark's input: ten lines, and once
// signed it passes Verify, xmlsec1 and the schema.
func TestBuiltInvoice(t *testing.T) {
	doc := builtInvoice(t)
	if n := strings.Count(string(doc), "<LineaDetalle>"); n != 10 {
		t.Fatalf("%d lines", n)
	}
	key, chain := fixture(t)
	signed, err := signer.Sign(doc, key, chain, signer.PolicyV44)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signer.Verify(signed); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "FE10.xml")
	if err := os.WriteFile(f, signed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(t, "xmlsec1", "--verify", "--id-attr:Id", signer.NamespaceXAdES+":SignedProperties",
		"--enabled-key-data", "x509", "--trusted-pem", caPath, f); err != nil {
		t.Errorf("xmlsec1: %v", err)
	}
	if err := run(t, "xmllint", "--noout", "--nonet", "--schema", filepath.Join(xsdDir, "FacturaElectronica_V4.4.xsd"), f); err != nil {
		t.Errorf("xmllint: %v", err)
	}
}
