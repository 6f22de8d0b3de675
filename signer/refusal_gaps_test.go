package signer

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
)

// resigned changes a signed document with change and then makes every
// same-document digest and the signature value right again with the
// fixture's key, as a forger holding a key would: only the rule the change
// breaks can refuse the result. Digests or a signature the change made
// impossible to compute are left as they are.
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
	if si == nil {
		return write(t, doc)
	}
	for _, ref := range si.SelectElements("Reference") {
		uri := ref.SelectAttrValue("URI", "")
		dv := ref.FindElement("./DigestValue")
		if uri == "" && dv != nil {
			// The whole document, its signature left out.
			whole := doc.Copy()
			if ws := whole.Root().FindElement("./Signature"); ws != nil {
				whole.Root().RemoveChild(ws)
			}
			if c, err := canonicalize(AlgorithmC14N10, "", whole.Root()); err == nil {
				sum := sha256.Sum256(c)
				dv.SetText(base64.StdEncoding.EncodeToString(sum[:]))
			}
			continue
		}
		if !strings.HasPrefix(uri, "#") || dv == nil || ref.FindElement("./Transforms") != nil {
			continue
		}
		target := doc.Root().FindElement(".//[@Id='" + uri[1:] + "']")
		if target == nil {
			continue
		}
		c, err := canonicalize(AlgorithmC14N10, "", target)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(c)
		dv.SetText(base64.StdEncoding.EncodeToString(sum[:]))
	}
	alg := ""
	if cm := si.FindElement("./CanonicalizationMethod"); cm != nil {
		alg = cm.SelectAttrValue("Algorithm", "")
	}
	c, err := canonicalize(alg, "", si)
	if err != nil {
		return write(t, doc)
	}
	sum := sha256.Sum256(c)
	value, err := rsa.SignPKCS1v15(nil, fixture(t).Key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	if sv := sig.FindElement("./SignatureValue"); sv != nil {
		sv.SetText(base64.StdEncoding.EncodeToString(value))
	}
	return write(t, doc)
}

func write(t *testing.T, doc *etree.Document) []byte {
	t.Helper()
	out, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// remove takes the first element at path out of sig.
func remove(sig *etree.Element, path string) {
	if e := sig.FindElement(path); e != nil {
		e.Parent().RemoveChild(e)
	}
}

// setText sets the text of the first element at path.
func setText(sig *etree.Element, path, text string) {
	if e := sig.FindElement(path); e != nil {
		e.SetText(text)
	}
}

// refTo returns the SignedInfo reference whose URI starts with prefix.
func refTo(sig *etree.Element, prefix string) *etree.Element {
	for _, r := range sig.FindElement("./SignedInfo").SelectElements("Reference") {
		uri := r.SelectAttrValue("URI", "")
		if (prefix == "" && uri == "") || (prefix != "" && strings.HasPrefix(uri, prefix)) {
			return r
		}
	}
	return nil
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

// TestVerifyRefusesEachRule forges a signed document once per refusal of
// Verify, each time re-computing every digest and the signature value it
// can, so that the refusal asserted (by its words) is the rule's own.
// Removing any one of the refusals in verify.go fails a case here or in
// the tests beside it, except two errors the earlier checks make
// unreachable: a digest method other than SHA-256/512 never reaches the
// hash, an unsupported transform never reaches canonicalisation.
func TestVerifyRefusesEachRule(t *testing.T) {
	good := signedExample(t)
	otherCert := base64.StdEncoding.EncodeToString([]byte("not a certificate"))
	for _, tc := range []struct {
		name   string
		forged func(t *testing.T) []byte
		want   string
	}{
		{"error/not XML", func(t *testing.T) []byte { return []byte("<a>") }, "parse document"},
		{"error/a DOCTYPE", func(t *testing.T) []byte {
			return bytes.Replace(good, []byte("?>"), []byte("?><!DOCTYPE x>"), 1)
		}, "DOCTYPE"},
		{"error/a second signature that fails", func(t *testing.T) []byte {
			i := bytes.Index(good, []byte("<ds:Signature "))
			j := bytes.LastIndex(good, []byte("</ds:Signature>")) + len("</ds:Signature>")
			second := bytes.ReplaceAll(good[i:j], []byte(`Id="`), []byte(`Id="b-`))
			return append(append(append([]byte{}, good[:j]...), second...), good[j:]...)
		}, "signature "},
		{"error/no SignedInfo", forge(func(sig *etree.Element) { remove(sig, "./SignedInfo") }), "no ds:SignedInfo"},
		{"error/RSA with SHA-1", forge(func(sig *etree.Element) {
			sig.FindElement("./SignedInfo/SignatureMethod").CreateAttr("Algorithm", "http://www.w3.org/2000/09/xmldsig#rsa-sha1")
		}), "unsupported signature method"},
		{"error/no QualifyingProperties", forge(func(sig *etree.Element) { remove(sig, ".//QualifyingProperties") }), "no xades:QualifyingProperties"},
		{"error/QualifyingProperties of another signature", forge(func(sig *etree.Element) {
			sig.FindElement(".//QualifyingProperties").CreateAttr("Target", "#another")
		}), "does not name the signature"},
		{"error/no SignedProperties", forge(func(sig *etree.Element) { remove(sig, ".//SignedProperties") }), "no xades:SignedProperties"},
		{"error/no reference to the document", forge(func(sig *etree.Element) {
			r := refTo(sig, "")
			r.Parent().RemoveChild(r)
		}), "no reference covers the whole document"},
		{"error/no reference to the SignedProperties", forge(func(sig *etree.Element) {
			r := refTo(sig, "#SignedProperties")
			r.Parent().RemoveChild(r)
		}), "no reference covers the signature's SignedProperties"},
		{"error/reference to a missing Id", forge(func(sig *etree.Element) {
			refTo(sig, "#KeyInfo").CreateAttr("URI", "#nowhere")
		}), "no element with that Id"},
		{"error/reference to another document", forge(func(sig *etree.Element) {
			refTo(sig, "#KeyInfo").CreateAttr("URI", "https://example.com/x.xml")
		}), "only same-document references"},
		{"error/an XSLT transform", forge(func(sig *etree.Element) {
			refTo(sig, "").FindElement("./Transforms").CreateElement("ds:Transform").CreateAttr("Algorithm", "http://www.w3.org/TR/1999/REC-xslt-19991116")
		}), "unsupported transform"},
		{"error/document reference without the enveloped transform", forge(func(sig *etree.Element) {
			r := refTo(sig, "")
			r.RemoveChild(r.FindElement("./Transforms"))
		}), "lacks the enveloped-signature transform"},
		{"error/enveloped transform on KeyInfo", forge(func(sig *etree.Element) {
			r := refTo(sig, "#KeyInfo")
			tr := etree.NewElement("ds:Transforms")
			tr.CreateElement("ds:Transform").CreateAttr("Algorithm", AlgorithmEnveloped)
			r.InsertChildAt(0, tr)
		}), "does not contain the signature"},
		{"error/a reference to the root without the enveloped transform", forge(func(sig *etree.Element) {
			sig.Parent().CreateAttr("Id", "raiz")
			refTo(sig, "#KeyInfo").CreateAttr("URI", "#raiz")
		}), "covers its own signature"},
		{"error/a signing key that is not RSA", forge(func(sig *etree.Element) {
			der := ecdsaCertificate(t)
			setText(sig, ".//X509Certificate", base64.StdEncoding.EncodeToString(der))
			sum := sha256.Sum256(der)
			setText(sig, ".//CertDigest/DigestValue", base64.StdEncoding.EncodeToString(sum[:]))
			sig.FindElement(".//CertDigest/DigestMethod").CreateAttr("Algorithm", AlgorithmSHA256)
			setText(sig, ".//X509SerialNumber", "7")
		}), "not RSA"},
		{"error/SHA-1 digest", forge(func(sig *etree.Element) {
			refTo(sig, "#KeyInfo").FindElement("./DigestMethod").CreateAttr("Algorithm", "http://www.w3.org/2000/09/xmldsig#sha1")
		}), "is not SHA-256 or SHA-512"},
		{"error/no certificate in KeyInfo", forge(func(sig *etree.Element) {
			for _, c := range sig.FindElements(".//X509Certificate") {
				c.Parent().RemoveChild(c)
			}
		}), "no X509Certificate in KeyInfo"},
		{"error/no SigningCertificate", forge(func(sig *etree.Element) { remove(sig, ".//SigningCertificate") }), "no xades:SigningCertificate/Cert"},
		{"error/certificate not base64", forge(func(sig *etree.Element) { setText(sig, ".//X509Certificate", "***") }), "X509Certificate is not base64"},
		{"error/certificate not a certificate", forge(func(sig *etree.Element) { setText(sig, ".//X509Certificate", otherCert) }), "X509Certificate:"},
		{"error/CertDigest not base64", forge(func(sig *etree.Element) { setText(sig, ".//CertDigest/DigestValue", "***") }), "CertDigest: "},
		{"error/CertDigest of an unknown method", forge(func(sig *etree.Element) {
			sig.FindElement(".//CertDigest/DigestMethod").CreateAttr("Algorithm", "urn:unknown")
		}), "CertDigest"},
		{"error/CertDigest of no certificate there", forge(func(sig *etree.Element) {
			setText(sig, ".//CertDigest/DigestValue", base64.StdEncoding.EncodeToString(make([]byte, 32)))
		}), "no KeyInfo certificate matches"},
		{"error/KeyValue of another key", forge(func(sig *etree.Element) {
			setText(sig, ".//RSAKeyValue/Modulus", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xc5}, 256)))
		}), "RSAKeyValue is not the signing certificate's key"},
		{"error/unknown canonicalisation of SignedInfo", forge(func(sig *etree.Element) {
			sig.FindElement("./SignedInfo/CanonicalizationMethod").CreateAttr("Algorithm", "urn:unknown")
		}), "canonicalize SignedInfo"},
		{"error/SignatureValue not base64", func(t *testing.T) []byte {
			return resignedThen(t, good, func(sig *etree.Element) { setText(sig, "./SignatureValue", "***") })
		}, "SignatureValue:"},
		{"error/no SigningTime", forge(func(sig *etree.Element) { remove(sig, ".//SigningTime") }), "no xades:SigningTime"},
		{"error/SigningTime unreadable", forge(func(sig *etree.Element) { setText(sig, ".//SigningTime", "yesterday") }), "SigningTime"},
		{"error/not XAdES-EPES", forge(func(sig *etree.Element) { remove(sig, ".//SignaturePolicyIdentifier") }), "not XAdES-EPES"},
		{"error/signed before the certificate was valid", forge(func(sig *etree.Element) {
			setText(sig, ".//SigningTime", "1990-01-01T00:00:00-06:00")
		}), "signing certificate at signing time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.forged(t))
			refused := errors.Is(err, ErrInvalidSignature) || errors.Is(err, ErrPolicyMismatch) || errors.Is(err, ErrCertificateExpired)
			if !refused || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal mentioning %q", err, tc.want)
			}
		})
	}
}

// forge is a case that re-signs the good example after change.
func forge(change func(sig *etree.Element)) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return resigned(t, signedExample(t), change) }
}

// resignedThen re-signs the document, then applies after (a change the
// re-signing would undo).
func resignedThen(t *testing.T, signed []byte, after func(sig *etree.Element)) []byte {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(resigned(t, signed, func(*etree.Element) {})); err != nil {
		t.Fatal(err)
	}
	after(doc.Root().FindElement("./Signature"))
	return write(t, doc)
}

// ecdsaCertificate is a self-signed ECDSA certificate, DER-encoded.
func ecdsaCertificate(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "EC", SerialNumber: "CPJ-3-101-123456"},
		NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
