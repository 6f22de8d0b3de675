package signer

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/signer/certmint"
)

func TestSignErrors(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	key, chain := fixture(t).Key, fixtureChain(t)
	at := func(tm time.Time) Option { return WithClock(func() time.Time { return tm }) }
	other := certmint.TestKey(4)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		doc     []byte
		key     *rsa.PrivateKey
		chain   []*x509.Certificate
		policy  Policy
		opts    []Option
		wantErr error
		wantMsg string
	}{
		{name: "error/expired certificate", opts: []Option{at(chain[0].NotAfter.Add(time.Second))}, wantErr: ErrCertificateExpired},
		{name: "error/not yet valid certificate", opts: []Option{at(chain[0].NotBefore.Add(-time.Second))}, wantErr: ErrCertificateExpired},
		{name: "error/key of another certificate", key: other, wantMsg: "does not belong"},
		{name: "error/small key", key: small, wantErr: ErrUnsupportedKey},
		{name: "error/no certificate", chain: []*x509.Certificate{}, wantMsg: "no signing certificate"},
		{name: "error/incomplete policy", policy: Policy{Identifier: "x"}, wantMsg: "policy"},
		{name: "error/not XML", doc: []byte("hola"), wantMsg: "document"},
		{name: "error/empty", doc: []byte{}, wantMsg: "document"},
		{name: "error/trailing comment", doc: append(bytes.TrimSpace(doc), "\n<!-- fin -->\n"...), wantMsg: "end tag"},
		{name: "error/processing instruction", doc: bytes.Replace(doc, []byte("?>\n"), []byte("?>\n<?xml-stylesheet href=\"a.xsl\"?>\n"), 1), wantMsg: "processing instruction"},
		{name: "error/doctype", doc: bytes.Replace(doc, []byte("?>\n"), []byte("?>\n<!DOCTYPE FacturaElectronica>\n"), 1), wantMsg: "DOCTYPE"},
		{name: "error/id with a quote", opts: []Option{at(goldenTime), WithID(`a"b`)}, wantMsg: "id"},
		{name: "error/latin-1 declared", doc: bytes.Replace(doc, []byte(`encoding="UTF-8"`), []byte(`encoding='ISO-8859-1'`), 1), wantMsg: "ISO-8859-1"},
		{name: "error/tab in attribute", doc: []byte("<a x=\"1\t2\"><b/></a>"), wantMsg: "tab or line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, k, c, p := doc, key, chain, PolicyV44
			if tt.doc != nil {
				d = tt.doc
			}
			if tt.key != nil {
				k = tt.key
			}
			if tt.chain != nil {
				c = tt.chain
			}
			if tt.policy != (Policy{}) {
				p = tt.policy
			}
			opts := tt.opts
			if opts == nil {
				opts = []Option{at(goldenTime)}
			}
			_, err := Sign(d, k, c, p, opts...)
			if err == nil {
				t.Fatal("Sign succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestSignKeepsBytesAndStripsBOM(t *testing.T) {
	t.Parallel()
	doc := []byte("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<Doc xmlns=\"urn:x\">\r\n  <A>1</A>\r\n</Doc>\r\n")
	out, err := Sign(doc, fixture(t).Key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		t.Error("BOM kept")
	}
	if !bytes.HasPrefix(out, doc[3:bytes.Index(doc, []byte("</Doc>"))]) || !bytes.HasSuffix(out, []byte("</ds:Signature></Doc>\r\n")) {
		t.Errorf("document bytes changed:\n%s", out)
	}
	if _, err := Verify(out); err != nil {
		t.Fatal(err)
	}
	if err := xmlsecVerify(t, out, fixtureCAPEM); err != nil {
		t.Fatal(err)
	}
}

func TestSignIDsAreUnique(t *testing.T) {
	t.Parallel()
	doc := []byte(`<Doc xmlns="urn:x"><A>1</A></Doc>`)
	seen := map[string]bool{}
	for range 20 {
		out, err := Sign(doc, fixture(t).Key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Verify(out)
		if err != nil {
			t.Fatal(err)
		}
		if seen[res.SignatureID] {
			t.Fatalf("signature id %s repeated", res.SignatureID)
		}
		seen[res.SignatureID] = true
	}
}

// TestSignConcurrently signs with one key from many goroutines (run under
// -race) and checks every result.
func TestSignConcurrently(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	key, chain := fixture(t).Key, fixtureChain(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			out, err := Sign(doc, key, chain, PolicyV44)
			if err == nil {
				_, err = Verify(out)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSignWithClaimedRole(t *testing.T) {
	t.Parallel()
	doc := []byte(`<Doc xmlns="urn:x"><A>1</A></Doc>`)
	out, err := Sign(doc, fixture(t).Key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }), WithClaimedRole("Receptor"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClaimedRole != "Receptor" {
		t.Errorf("ClaimedRole = %q", res.ClaimedRole)
	}
	if err := xmlsecVerify(t, out, fixtureCAPEM); err != nil {
		t.Fatal(err)
	}
}
