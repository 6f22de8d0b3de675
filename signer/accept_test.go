package signer

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha512"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerifyAcceptsOtherProfiles changes the service's own signature into
// the profiles other signers write (the tax authority's, suppliers'), seals
// it again with the fixture key, and checks that Verify accepts it, that
// xmlsec1, a verifier written by others, accepts it too (so the variant is
// a valid signature, not one only this package believes), and that a
// change of one byte of the signed content is refused.
func TestVerifyAcceptsOtherProfiles(t *testing.T) {
	t.Parallel()
	base := signedExample(t)
	key := fixture(t).Key
	leaf := fixture(t).Leaf
	policyV43 := realPolicy(t, realSupplierV43)
	setAlg := func(p, alg string) func(t *testing.T, s *sigDoc) {
		return func(t *testing.T, s *sigDoc) { s.el(t, p).CreateAttr("Algorithm", alg) }
	}
	digestAll := func(alg string) func(t *testing.T, s *sigDoc) {
		return func(t *testing.T, s *sigDoc) {
			for _, dm := range s.el(t, "ds:SignedInfo").FindElements("ds:Reference/ds:DigestMethod") {
				dm.CreateAttr("Algorithm", alg)
			}
		}
	}
	both := func(edits ...func(t *testing.T, s *sigDoc)) func(t *testing.T, s *sigDoc) {
		return func(t *testing.T, s *sigDoc) {
			for _, e := range edits {
				e(t, s)
			}
		}
	}
	tests := []struct {
		name       string
		edit       func(t *testing.T, s *sigDoc)
		opts       VerifyOptions
		wantPolicy *Policy
	}{
		{name: "the service's own", wantPolicy: &PolicyV44},
		{name: "XPath filter of every signature, then exclusive C14N",
			edit: xpathTransform("not(ancestor-or-self::ds:Signature)", "ds", NamespaceDS), wantPolicy: &PolicyV44},
		{name: "XPath filter of its own signature, prefix declared on ds:XPath",
			edit:       xpathTransform("count(ancestor-or-self::dsig:Signature | here()/ancestor::dsig:Signature[1]) > count(ancestor-or-self::dsig:Signature)", "dsig", NamespaceDS),
			wantPolicy: &PolicyV44},
		{name: "XPath Filter 2.0 subtract of every signature", edit: func(t *testing.T, s *sigDoc) {
			tr := s.newDocumentTransforms(t).CreateElement("ds:Transform")
			tr.CreateAttr("Algorithm", AlgorithmXPathFilter2)
			x := tr.CreateElement("dsig-xpath:XPath")
			x.CreateAttr("xmlns:dsig-xpath", AlgorithmXPathFilter2)
			x.CreateAttr("Filter", "subtract")
			x.SetText("/descendant::ds:Signature")
		}, wantPolicy: &PolicyV44},
		{name: "exclusive C14N of SignedInfo",
			edit: setAlg("ds:SignedInfo/ds:CanonicalizationMethod", AlgorithmExcC14N), wantPolicy: &PolicyV44},
		{name: "C14N with comments on the document", edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refDocument).SelectElement("ds:Transforms").CreateElement("ds:Transform").
				CreateAttr("Algorithm", AlgorithmC14N10WithComments)
		}, wantPolicy: &PolicyV44},
		{name: "SHA-1 digests and RSA-SHA1",
			edit: both(digestAll(AlgorithmSHA1), setAlg("ds:SignedInfo/ds:SignatureMethod", AlgorithmRSASHA1)), wantPolicy: &PolicyV44},
		{name: "SHA-512 digests and RSA-SHA512",
			edit: both(digestAll(AlgorithmSHA512), setAlg("ds:SignedInfo/ds:SignatureMethod", AlgorithmRSASHA512)), wantPolicy: &PolicyV44},
		{name: "SHA-1 certificate digest", edit: func(t *testing.T, s *sigDoc) {
			sum := sha1.Sum(leaf.Raw)
			s.el(t, certPath+"/xades:CertDigest/ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA1)
			s.el(t, certPath+"/xades:CertDigest/ds:DigestValue").SetText(b64(sum[:]))
		}, wantPolicy: &PolicyV44},
		{name: "SHA-512 certificate digest", edit: func(t *testing.T, s *sigDoc) {
			sum := sha512.Sum512(leaf.Raw)
			s.el(t, certPath+"/xades:CertDigest/ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA512)
			s.el(t, certPath+"/xades:CertDigest/ds:DigestValue").SetText(b64(sum[:]))
		}, wantPolicy: &PolicyV44},
		{name: "SignedProperties reference without Type", edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refSignedProperties).RemoveAttr("Type")
		}, wantPolicy: &PolicyV44},
		{name: "SigningTime in UTC", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, sspPath+"/xades:SigningTime").SetText(goldenTime.UTC().Format("2006-01-02T15:04:05.000Z"))
		}, wantPolicy: &PolicyV44},
		{name: "no policy (XAdES-BES), any policy accepted", opts: VerifyOptions{AnyPolicy: true}, edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, sspPath+"/xades:SignaturePolicyIdentifier")
		}},
		{name: "the v4.3 policy, any policy accepted", opts: VerifyOptions{AnyPolicy: true}, edit: func(t *testing.T, s *sigDoc) {
			s.el(t, policyPath+"/xades:SigPolicyId/xades:Identifier").SetText(policyV43.Identifier)
			s.el(t, policyPath+"/xades:SigPolicyHash/ds:DigestMethod").CreateAttr("Algorithm", policyV43.DigestMethod)
			s.el(t, policyPath+"/xades:SigPolicyHash/ds:DigestValue").SetText(policyV43.Digest)
		}, wantPolicy: &policyV43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := parseSigned(t, base)
			if tt.edit != nil {
				tt.edit(t, s)
				s.redigest(t)
				s.resign(t, key)
			}
			b := s.bytes(t)
			res, err := VerifyWith(b, tt.opts)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !res.Certificate.Equal(leaf) {
				t.Errorf("signing certificate %s, want the fixture's", res.Certificate.Subject)
			}
			if !res.SigningTime.Equal(goldenTime) {
				t.Errorf("SigningTime %s, want %s", res.SigningTime, goldenTime)
			}
			switch {
			case tt.wantPolicy == nil && res.Policy != nil:
				t.Errorf("Policy %+v, want none", *res.Policy)
			case tt.wantPolicy != nil && (res.Policy == nil || *res.Policy != *tt.wantPolicy):
				t.Errorf("Policy %+v, want %+v", res.Policy, *tt.wantPolicy)
			}
			if err := xmlsecVerify(t, b, fixtureCAPEM); err != nil {
				t.Errorf("xmlsec1 refuses the variant, so it is not a valid signature: %v", err)
			}
			tampered := bytes.Replace(b, []byte("<Codigo>"), []byte("<Codigo> "), 1)
			if bytes.Equal(tampered, b) {
				t.Fatal("no <Codigo> to change")
			}
			if _, err := VerifyWith(tampered, tt.opts); !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("a changed document: err = %v, want ErrInvalidSignature", err)
			}
		})
	}
}

// TestVerifyXPathLeavesOutEverySignature checks the DSS filter's meaning: a
// second signature added after the first one leaves the first one's
// document digest unchanged, while the enveloped-signature transform
// leaves out only its own signature, so the same addition breaks it.
func TestVerifyXPathLeavesOutEverySignature(t *testing.T) {
	t.Parallel()
	key := fixture(t).Key
	for _, tt := range []struct {
		name  string
		edit  func(t *testing.T, s *sigDoc)
		holds bool
	}{
		{name: "XPath filter", edit: xpathTransform("not(ancestor-or-self::ds:Signature)", "ds", NamespaceDS), holds: true},
		{name: "enveloped-signature transform", edit: func(*testing.T, *sigDoc) {}, holds: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := parseSigned(t, signedExample(t))
			tt.edit(t, s)
			s.redigest(t)
			s.resign(t, key)
			first := s.bytes(t)
			second, err := Sign(first, key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(second)
			if err != nil {
				t.Fatal(err)
			}
			// The first signature alone: the second one is checked by
			// VerifyParsed too, and its own enveloped transform does not
			// leave out the first, so it holds either way.
			sigs := p.Root().SelectElements("Signature")
			_, err = verifySignature(p.Root(), sigs[0], indexIDs(p.Root()), VerifyOptions{Policy: PolicyV44})
			if tt.holds && err != nil {
				t.Errorf("first signature: %v", err)
			}
			if !tt.holds && err == nil {
				t.Error("the first signature still holds after a second one was added")
			}
		})
	}
}

// TestVerifyRefusesHiddenSignature: the DSS filter leaves every ds:Signature
// out of the digest, so one slipped inside the content (here inside an
// element of the document, with text around it) would change what a
// reader sees without breaking the digest; it is refused.
func TestVerifyRefusesHiddenSignature(t *testing.T) {
	t.Parallel()
	s := parseSigned(t, signedExample(t))
	xpathTransform("not(ancestor-or-self::ds:Signature)", "ds", NamespaceDS)(t, s)
	s.redigest(t)
	s.resign(t, fixture(t).Key)
	b := s.bytes(t)
	if _, err := VerifyWith(b, VerifyOptions{}); err != nil {
		t.Fatalf("before: %v", err)
	}
	hidden := bytes.Replace(b, []byte("<Codigo>"), []byte(`<Codigo><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><Oculto/></ds:Signature>`), 1)
	if _, err := VerifyWith(hidden, VerifyOptions{}); !errors.Is(err, ErrInvalidSignature) || !strings.Contains(err.Error(), "inside <Codigo>") {
		t.Errorf("a signature hidden in the content: err = %v", err)
	}
}
