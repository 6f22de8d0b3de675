package signer

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
)

// tenLineInvoice builds a FacturaElectronica with 10 detail lines from the
// example document (its three lines repeated and renumbered).
func tenLineInvoice(tb testing.TB) []byte {
	tb.Helper()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		tb.Fatal(err)
	}
	lineRE := regexp.MustCompile(`(?s)<LineaDetalle>.*?</LineaDetalle>\n`)
	lines := lineRE.FindAll(doc, -1)
	if len(lines) != 3 {
		tb.Fatalf("example has %d lines", len(lines))
	}
	numRE := regexp.MustCompile(`<NumeroLinea>\d+</NumeroLinea>`)
	var detail bytes.Buffer
	for i := range 10 {
		detail.Write(numRE.ReplaceAll(lines[i%3], fmt.Appendf(nil, "<NumeroLinea>%d</NumeroLinea>", i+1)))
	}
	first := bytes.Index(doc, lines[0])
	last := bytes.Index(doc, lines[2]) + len(lines[2])
	out := append([]byte{}, doc[:first]...)
	out = append(out, detail.Bytes()...)
	return append(out, doc[last:]...)
}

func TestTenLineInvoice(t *testing.T) {
	doc := tenLineInvoice(t)
	if n := bytes.Count(doc, []byte("<LineaDetalle>")); n != 10 {
		t.Fatalf("%d lines", n)
	}
	signed, err := Sign(doc, fixture(t).Key, fixtureChain(t), PolicyV44)
	if err != nil {
		t.Fatal(err)
	}
	if err := xsdValidate(t, signed); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSign10Lines signs a 10-line invoice: parse, canonicalize,
// digest, build the XAdES elements, one RSA-2048 signature, splice.
func BenchmarkSign10Lines(b *testing.B) {
	doc := tenLineInvoice(b)
	key, chain := fixture(b).Key, fixtureChain(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(doc, key, chain, PolicyV44); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawRSA2048 is the floor: one RSA-2048 PKCS#1 v1.5 SHA-256
// signature with the same key.
func BenchmarkRawRSA2048(b *testing.B) {
	key := fixture(b).Key.(*rsa.PrivateKey)
	h := sha256.Sum256([]byte("facturad"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheSign10Lines is BenchmarkSign10Lines through the
// per-company cache (warm, with the version check on every signature).
func BenchmarkCacheSign10Lines(b *testing.B) {
	doc := tenLineInvoice(b)
	p12, err := os.ReadFile(fixtureP12)
	if err != nil {
		b.Fatal(err)
	}
	src := newMemSource()
	src.put(1, p12, fixturePIN)
	c := newTestCache(b, src, 10)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Sign(ctx, 1, doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify10Lines verifies a signed 10-line invoice.
func BenchmarkVerify10Lines(b *testing.B) {
	signed, err := Sign(tenLineInvoice(b), fixture(b).Key, fixtureChain(b), PolicyV44)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(signed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse10Lines and BenchmarkC14N10Lines isolate the two largest
// costs around the RSA operation: parsing the document with etree and
// canonicalizing it with goxmldsig.
func BenchmarkParse10Lines(b *testing.B) {
	doc := tenLineInvoice(b)
	b.ReportAllocs()
	for b.Loop() {
		d := etree.NewDocument()
		if err := d.ReadFromBytes(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkC14N10Lines(b *testing.B) {
	d := etree.NewDocument()
	if err := d.ReadFromBytes(tenLineInvoice(b)); err != nil {
		b.Fatal(err)
	}
	c := dsig.MakeC14N11Canonicalizer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Canonicalize(d.Root()); err != nil {
			b.Fatal(err)
		}
	}
}
