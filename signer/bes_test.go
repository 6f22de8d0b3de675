package signer

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/xmlcheck"
)

// TestSignBES signs a document in the tax authority's profile and checks
// it: Verify accepts it with any policy (and reports none), refuses it by
// the rule for the service's own documents, and xmlsec1 accepts it, chained
// to the fixture's CA; a changed byte of the content is refused.
func TestSignBES(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("testdata/golden/FE-ejemplo1.xml")
	if err != nil {
		t.Fatal(err)
	}
	signed, err := SignBES(doc, fixture(t).Key, fixtureChain(t), WithClock(func() time.Time { return goldenTime }))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(signed, doc[:bytes.LastIndex(doc, []byte("</"))]) {
		t.Error("the document's own bytes were not kept")
	}
	for _, want := range []string{
		`<ds:XPath>not(ancestor-or-self::ds:Signature)</ds:XPath>`,
		`<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>`,
		`<ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/>`,
		`<xades:SigningTime>` + goldenTime.UTC().Format("2006-01-02T15:04:05Z") + `</xades:SigningTime>`,
	} {
		if !strings.Contains(string(signed), want) {
			t.Errorf("no %s in the signature", want)
		}
	}
	if strings.Contains(string(signed), "SignaturePolicyIdentifier") {
		t.Error("a policy in a XAdES-BES signature")
	}
	res, err := VerifyWith(signed, VerifyOptions{AnyPolicy: true})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if res.Policy != nil || !res.SigningTime.Equal(goldenTime) || !res.Certificate.Equal(fixture(t).Leaf) {
		t.Errorf("result %+v", res)
	}
	if _, err := Verify(signed); !errors.Is(err, ErrPolicyMismatch) {
		t.Errorf("by the v4.4 rule: err = %v, want ErrPolicyMismatch", err)
	}
	if err := xmlcheckBES(t, signed); err != nil {
		t.Errorf("xmlsec1: %v", err)
	}
	tampered := bytes.Replace(signed, []byte("<Codigo>"), []byte("<Codigo> "), 1)
	if _, err := VerifyWith(tampered, VerifyOptions{AnyPolicy: true}); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("changed: err = %v, want ErrInvalidSignature", err)
	}
}

// TestRFC2253 writes the real answer's issuer as DSS wrote it.
func TestRFC2253(t *testing.T) {
	t.Parallel()
	res, err := VerifyWith(readReal(t, realAnswer), VerifyOptions{AnyPolicy: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rfc2253(res.Certificate.RawIssuer)
	if err != nil {
		t.Fatal(err)
	}
	const want = "CN=CA SINPE - PERSONA JURIDICA v2,OU=DIVISION SISTEMAS DE PAGO,O=BANCO CENTRAL DE COSTA RICA,C=CR,2.5.4.5=#131043504a2d342d3030302d303034303137"
	if got != want {
		t.Errorf("rfc2253 = %s\nwant      %s", got, want)
	}
}

// xmlcheckBES runs xmlsec1 over a signature of the tax authority's
// profile: two references, chained to the fixture's CA.
func xmlcheckBES(t testing.TB, signed []byte) error {
	t.Helper()
	return xmlcheck.XMLSecReferences(t, signed, fixtureCAPEM, 2)
}
