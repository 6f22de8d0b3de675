package signer

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/beevik/etree"
)

// resigned changes a signed document with change and then makes every
// digest and the signature value right again with the fixture's key, as a
// forger holding a key would: only the rule the change breaks can refuse
// the result.
func resigned(t *testing.T, signed []byte, change func(sig *etree.Element)) []byte {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(signed); err != nil {
		t.Fatal(err)
	}
	sig := doc.Root().FindElement("./Signature")
	if sig == nil {
		t.Fatal("no ds:Signature")
	}
	change(sig)
	si := sig.FindElement("./SignedInfo")
	sp := sig.FindElement(".//SignedProperties")
	for _, ref := range si.SelectElements("Reference") {
		if ref.SelectAttrValue("URI", "") != "#"+sp.SelectAttrValue("Id", "") {
			continue
		}
		c, err := canonicalize(AlgorithmC14N10, "", sp)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(c)
		ref.FindElement("./DigestValue").SetText(base64.StdEncoding.EncodeToString(sum[:]))
	}
	c, err := canonicalize(si.FindElement("./CanonicalizationMethod").SelectAttrValue("Algorithm", ""), "", si)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c)
	value, err := rsa.SignPKCS1v15(nil, fixture(t).Key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig.FindElement("./SignatureValue").SetText(base64.StdEncoding.EncodeToString(value))
	out, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVerifyRefusalGaps pins two refusals no other test reached: a
// SignedProperties reference without the XAdES Type, and signed properties
// naming a serial number other than the signing certificate's. Each forged
// document carries valid digests and a valid signature value, so only the
// rule itself can refuse it.
func TestVerifyRefusalGaps(t *testing.T) {
	good := signedExample(t)
	if _, err := Verify(resigned(t, good, func(*etree.Element) {})); err != nil {
		t.Fatalf("re-signing without a change breaks the document: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(sig *etree.Element)
		want   string
	}{
		{"error/SignedProperties reference without Type", func(sig *etree.Element) {
			for _, ref := range sig.FindElement("./SignedInfo").SelectElements("Reference") {
				ref.RemoveAttr("Type")
			}
		}, "lacks Type"},
		{"error/serial number of another certificate", func(sig *etree.Element) {
			sn := sig.FindElement(".//X509SerialNumber")
			sn.SetText(sn.Text() + "1")
		}, "X509SerialNumber"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(resigned(t, good, tc.change))
			if !errors.Is(err, ErrInvalidSignature) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidSignature mentioning %q", err, tc.want)
			}
		})
	}
}
