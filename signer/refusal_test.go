package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"

	"facturad/hacienda"
	"facturad/signer/certmint"
)

// Paths below ds:Signature to the signed properties the tests change.
const (
	sspPath    = "ds:Object/xades:QualifyingProperties/xades:SignedProperties/xades:SignedSignatureProperties"
	certPath   = sspPath + "/xades:SigningCertificate/xades:Cert"
	policyPath = sspPath + "/xades:SignaturePolicyIdentifier/xades:SignaturePolicyId"
)

// sigDoc is a signed document taken apart so that a test can change it and
// seal it again: recompute the reference digests and the signature value,
// so that only the check under test can refuse it.
type sigDoc struct {
	d    *etree.Document
	root *etree.Element
	sig  *etree.Element
}

func parseSigned(t *testing.T, b []byte) *sigDoc {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(b); err != nil {
		t.Fatal(err)
	}
	sigs := d.Root().SelectElements("ds:Signature")
	if len(sigs) != 1 {
		t.Fatalf("%d signatures, want 1", len(sigs))
	}
	return &sigDoc{d: d, root: d.Root(), sig: sigs[0]}
}

// el returns the element at path p below the signature, failing the test
// if there is none.
func (s *sigDoc) el(t *testing.T, p string) *etree.Element {
	t.Helper()
	e := s.sig.FindElement(p)
	if e == nil {
		t.Fatalf("no %s in the signature", p)
	}
	return e
}

// The references Sign writes, in its order.
const (
	refDocument = iota + 1
	refKeyInfo
	refSignedProperties
)

// ref returns the i-th (from 1) ds:Reference of SignedInfo.
func (s *sigDoc) ref(t *testing.T, i int) *etree.Element {
	t.Helper()
	refs := s.el(t, "ds:SignedInfo").SelectElements("ds:Reference")
	if i > len(refs) {
		t.Fatalf("no reference %d", i)
	}
	return refs[i-1]
}

// remove takes the element at path p below the signature out of its parent.
func (s *sigDoc) remove(t *testing.T, p string) {
	t.Helper()
	e := s.el(t, p)
	e.Parent().RemoveChild(e)
}

// redigest recomputes the DigestValue of every reference of SignedInfo whose
// target exists, the way a verifier reads it. A target that does not
// canonicalize is digested as empty.
func (s *sigDoc) redigest(t *testing.T) {
	t.Helper()
	for _, r := range s.el(t, "ds:SignedInfo").SelectElements("ds:Reference") {
		uri := r.SelectAttrValue("URI", "")
		target := s.root
		if uri != "" {
			// The verifier's own index: an Id used twice maps to nil.
			if target = indexIDs(s.root)[strings.TrimPrefix(uri, "#")]; target == nil {
				continue
			}
		}
		// The transforms as the verifier reads them; one it refuses
		// leaves the digest as it was.
		plan, err := readTransforms(r.FindElements("ds:Transforms/*"))
		if err != nil {
			continue
		}
		dm := r.SelectElement("ds:DigestMethod")
		dv := r.SelectElement("ds:DigestValue")
		if dm == nil || dv == nil {
			continue
		}
		h, err := newHash(dm.SelectAttrValue("Algorithm", ""))
		if err != nil {
			t.Fatal(err)
		}
		var skip []*etree.Element
		switch plan.exclude {
		case excludeOwn:
			skip = []*etree.Element{s.sig}
		case excludeAll:
			skip = signaturesUnder(target)
		}
		out, err := canonicalize(plan.c14nAlg, plan.prefixes, target, skip)
		if err != nil {
			out = nil
		}
		h.Write(out)
		dv.SetText(base64.StdEncoding.EncodeToString(h.Sum(nil)))
	}
}

// resign recomputes the signature value over SignedInfo with key, with the
// hash its SignatureMethod names (SHA-256 for one Verify does not accept). A SignedInfo that does not canonicalize is signed as empty.
func (s *sigDoc) resign(t *testing.T, key crypto.Signer) {
	t.Helper()
	si := s.el(t, "ds:SignedInfo")
	c14n, prefixes := "", ""
	if cm := si.SelectElement("ds:CanonicalizationMethod"); cm != nil {
		c14n, prefixes = cm.SelectAttrValue("Algorithm", ""), inclusivePrefixes(cm)
	}
	in, err := canonicalize(c14n, prefixes, si, nil)
	if err != nil {
		in = nil
	}
	h, ok := signatureMethods[si.FindElement("ds:SignatureMethod").SelectAttrValue("Algorithm", "")]
	if !ok {
		h = crypto.SHA256
	}
	hh := h.New()
	hh.Write(in)
	value, err := key.Sign(rand.Reader, hh.Sum(nil), h)
	if err != nil {
		t.Fatal(err)
	}
	if sv := s.sig.SelectElement("ds:SignatureValue"); sv != nil {
		sv.SetText(base64.StdEncoding.EncodeToString(value))
	}
}

func (s *sigDoc) bytes(t *testing.T) []byte {
	t.Helper()
	b, err := s.d.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sealing is what a refusal case recomputes after its change.
type sealing int

const (
	redigestAndResign sealing = iota // every reference digest, then the signature value
	resignOnly                       // the signature value only: the digests stay as they were
	leaveAsIs                        // nothing
)

// appendText adds suffix to the text of e. A stray character after valid
// base64 makes the decoder fail after it has decoded the whole value, so
// only the decoding error can refuse it.
func appendText(e *etree.Element, suffix string) { e.SetText(e.Text() + suffix) }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func sha256B64(b []byte) string {
	sum := sha256.Sum256(b)
	return b64(sum[:])
}

// TestVerifyRefusal changes a signed document in one way per case and,
// where the change touches what is signed, seals it again (reference
// digests and signature value recomputed with the fixture key), so that the
// check under test is the only one left to refuse it. Each case asserts the
// error's sentinel and what the error mentions: most documents here would
// be accepted without their check; the others would still be refused, by a
// later check and for another reason, which the mentioned text tells apart.
func TestVerifyRefusal(t *testing.T) {
	t.Parallel()
	base := signedExample(t)
	if _, err := Verify(base); err != nil {
		t.Fatalf("untouched document: %v", err)
	}
	key := fixture(t).Key
	leaf := fixture(t).Leaf
	otherKey := certmint.TestKey(3)

	otherCA, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(6), NotBefore: goldenTime.AddDate(-1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// Another certificate of the same key and holder, with another serial
	// number.
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("fixture key is %T", key)
	}
	renewed, err := certmint.MintCertificate(certmint.Options{
		TipoIdentificacion: "02", Identificacion: "3101123456", Name: leaf.Subject.CommonName, PIN: "1",
		Key: rsaKey, NotBefore: goldenTime.AddDate(-1, 0, 0), CA: otherCA,
	})
	if err != nil {
		t.Fatal(err)
	}
	if renewed.Leaf.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Fatal("the other certificate has the same serial number")
	}
	ecCert := ecdsaCertificate(t)

	signingTime := func(tm time.Time) func(*testing.T, *sigDoc) {
		return func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:Object/xades:QualifyingProperties/xades:SignedProperties/xades:SignedSignatureProperties/xades:SigningTime").
				SetText(tm.In(hacienda.CostaRica).Format("2006-01-02T15:04:05-07:00"))
		}
	}

	tests := []struct {
		name    string
		edit    func(t *testing.T, s *sigDoc)
		seal    sealing
		raw     func(t *testing.T, b []byte) []byte // after sealing, on the bytes
		opts    VerifyOptions
		wantErr error // ErrInvalidSignature if nil
		wantMsg string
	}{
		// The document as a whole.
		{name: "error/not well-formed", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return append(b, "</FacturaElectronica>"...)
		}, wantMsg: "parse document"},
		{name: "error/no root element", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- nada -->\n")
		}, wantMsg: "no root element"},
		{name: "error/DOCTYPE", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return replaceOnce(t, b, "?>", "?>", "?>\n<!DOCTYPE FacturaElectronica>")
		}, wantMsg: "DOCTYPE"},
		{name: "error/processing instruction before the root", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return replaceOnce(t, b, "?>", "?>", "?>\n<?xml-stylesheet href=\"a.xsl\"?>")
		}, wantMsg: "processing instruction"},
		{name: "error/Latin-1 declared", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return replaceOnce(t, b, "<?xml", `encoding="UTF-8"`, `encoding="ISO-8859-1"`)
		}, wantMsg: "ISO-8859-1"},
		{name: "error/unsigned element after the root", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return append(append([]byte{}, b...), "<Extra>no firmado</Extra>"...)
		}, wantMsg: "content after its root element"},
		{name: "error/unsigned text after the root", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			return append(append([]byte{}, b...), "no firmado"...)
		}, wantMsg: "text outside its root element"},
		{name: "error/tab in an attribute", edit: func(t *testing.T, s *sigDoc) {
			s.root.SelectElement("Clave").CreateAttr("nota", "a\tb")
		}, wantMsg: "tab or line break"},
		{name: "error/no signature", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.root.RemoveChild(s.sig)
		}, wantMsg: "no ds:Signature"},
		{name: "error/second signature breaks the first", seal: leaveAsIs, raw: func(t *testing.T, b []byte) []byte {
			out, err := Sign(b, key, fixtureChain(t), PolicyV44, WithClock(func() time.Time { return goldenTime }), WithClaimedRole("Receptor"))
			if err != nil {
				t.Fatal(err)
			}
			return out
		}, wantMsg: "signature 1: "},

		// SignedInfo and the signed properties' place.
		{name: "error/no SignedInfo", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:SignedInfo")
		}, wantMsg: "no ds:SignedInfo"},
		{name: "error/RSA-MD5 signature method", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:SignedInfo/ds:SignatureMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmldsig-more#rsa-md5")
		}, wantMsg: "unsupported signature method"},
		{name: "error/no QualifyingProperties", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:Object")
		}, wantMsg: "no xades:QualifyingProperties"},
		{name: "error/QualifyingProperties of another signature", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:Object/xades:QualifyingProperties").CreateAttr("Target", "#Signature-otra")
		}, wantMsg: "Target"},
		{name: "error/signature without Id", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.sig.RemoveAttr("Id")
			s.el(t, "ds:Object/xades:QualifyingProperties").CreateAttr("Target", "#")
		}, wantMsg: "Target"},
		{name: "error/no SignedProperties", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:Object/xades:QualifyingProperties/xades:SignedProperties").Tag = "UnsignedProperties"
		}, wantMsg: "no xades:SignedProperties"},

		// References.
		{name: "error/reference without DigestValue", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refKeyInfo)
			r.RemoveChild(r.SelectElement("ds:DigestValue"))
		}, wantMsg: "has no DigestValue"},
		{name: "error/DigestValue not base64", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			appendText(s.ref(t, refKeyInfo).SelectElement("ds:DigestValue"), "*")
		}, wantMsg: "DigestValue is not base64"},
		{name: "error/SignedProperties reference of another Type", edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refSignedProperties).CreateAttr("Type", "http://www.w3.org/2000/09/xmldsig#Object")
		}, wantMsg: "has Type"},
		{name: "error/no reference to the document", edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refDocument)
			r.Parent().RemoveChild(r)
		}, wantMsg: "covers the whole document"},
		{name: "error/no reference to SignedProperties", edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refSignedProperties)
			r.Parent().RemoveChild(r)
		}, wantMsg: "covers the signature's SignedProperties"},
		{name: "error/second, unsigned SignedProperties", edit: func(t *testing.T, s *sigDoc) {
			// A later ds:Object with its own QualifyingProperties for this
			// signature, which no reference covers, and another signing time.
			obj := s.el(t, "ds:Object").Copy()
			obj.CreateAttr("Id", "XadesObjectId-copia")
			obj.FindElement("xades:QualifyingProperties").CreateAttr("Id", "QualifyingProperties-copia")
			obj.FindElement("xades:QualifyingProperties/xades:SignedProperties").CreateAttr("Id", "SignedProperties-copia")
			obj.FindElement("xades:QualifyingProperties/xades:SignedProperties/xades:SignedSignatureProperties/xades:SigningTime").SetText("2025-09-16T08:00:00-06:00")
			s.sig.AddChild(obj)
		}, wantMsg: "covers the signature's SignedProperties"},
		{name: "error/reference to a missing Id", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refKeyInfo).CreateAttr("URI", "#no-existe")
		}, wantMsg: "no element with that Id"},
		{name: "error/Id used twice", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			// In an extra ds:Object, which no reference covers.
			id := s.el(t, "ds:KeyInfo").SelectAttrValue("Id", "")
			s.sig.CreateElement("ds:Object").CreateElement("Copia").CreateAttr("Id", id)
		}, wantMsg: "used more than once"},
		{name: "error/reference to another document", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refKeyInfo).CreateAttr("URI", "https://example.com/keyinfo.xml")
		}, wantMsg: "only same-document references"},
		{name: "error/XSLT transform", edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refKeyInfo)
			ts := etree.NewElement("ds:Transforms")
			ts.CreateElement("ds:Transform").CreateAttr("Algorithm", "http://www.w3.org/TR/1999/REC-xslt-19991116")
			r.InsertChildAt(0, ts)
		}, wantMsg: "unsupported transform"},
		{name: "error/document reference without the enveloped-signature transform", edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refDocument)
			r.RemoveChild(r.SelectElement("ds:Transforms"))
		}, wantMsg: "does not leave out its signature"},
		{name: "error/enveloped transform on KeyInfo", edit: func(t *testing.T, s *sigDoc) {
			r := s.ref(t, refKeyInfo)
			ts := etree.NewElement("ds:Transforms")
			ts.CreateElement("ds:Transform").CreateAttr("Algorithm", AlgorithmEnveloped)
			r.InsertChildAt(0, ts)
		}, wantMsg: "does not contain it"},
		{name: "error/reference to the root by Id without the enveloped transform", edit: func(t *testing.T, s *sigDoc) {
			s.root.CreateAttr("Id", "comprobante")
			r := s.ref(t, refKeyInfo).Copy()
			r.RemoveAttr("Id")
			r.CreateAttr("URI", "#comprobante")
			s.el(t, "ds:SignedInfo").AddChild(r)
		}, wantMsg: "covers its own signature"},
		{name: "error/MD5 reference digest", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refKeyInfo).SelectElement("ds:DigestMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmldsig-more#md5")
		}, wantMsg: "unsupported digest method"},
		{name: "error/XPath filter of another expression", edit: xpathTransform("not(ancestor-or-self::ds:Object)", "ds", NamespaceDS),
			wantMsg: "unsupported XPath filter"},
		{name: "error/XPath filter whose prefix names another namespace", edit: xpathTransform("not(ancestor-or-self::dsig:Signature)", "dsig", "urn:otro"),
			wantMsg: "unsupported XPath filter"},
		{name: "error/XPath filter after the canonicalization", edit: func(t *testing.T, s *sigDoc) {
			xpathTransform("not(ancestor-or-self::ds:Signature)", "ds", NamespaceDS)(t, s)
			ts := s.ref(t, refDocument).SelectElement("ds:Transforms")
			ts.InsertChildAt(0, etree.NewElement("ds:Transform"))
			ts.ChildElements()[0].CreateAttr("Algorithm", AlgorithmExcC14N)
		}, wantMsg: "after the canonicalization"},
		{name: "error/too many references", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			si := s.el(t, "ds:SignedInfo")
			for range maxReferences {
				si.AddChild(s.ref(t, refKeyInfo).Copy())
			}
		}, wantMsg: "more than 16 references"},
		// Redeclaring the xml prefix is an error for the namespace-aware
		// canonicalizations, on an ancestor of the target, on the target or
		// below it.
		{name: "error/reference target under a bad namespace declaration", edit: badNamespace("ancestor"), wantMsg: "canonicalize"},
		{name: "error/reference target with a bad namespace declaration", edit: badNamespace("target"), wantMsg: "canonicalize"},
		{name: "error/reference target over a bad namespace declaration", edit: badNamespace("descendant"), wantMsg: "canonicalize"},
		{name: "error/KeyInfo digest mismatch", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.ref(t, refKeyInfo).SelectElement("ds:DigestValue").SetText(sha256B64([]byte("otra cosa")))
		}, wantMsg: "digest mismatch"},
		{name: "error/document changed, signature value recomputed", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.root.SelectElement("Clave").SetText("50615092500310112345600100001010000000124112345678")
		}, wantMsg: "digest mismatch"},

		// The signing certificate.
		{name: "error/X509Certificate not base64", edit: func(t *testing.T, s *sigDoc) {
			appendText(s.el(t, "ds:KeyInfo/ds:X509Data/ds:X509Certificate"), "*")
		}, wantMsg: "X509Certificate is not base64"},
		{name: "error/X509Certificate not a certificate", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:KeyInfo/ds:X509Data/ds:X509Certificate").SetText(b64([]byte("no es un certificado")))
		}, wantMsg: "X509Certificate: x509"},
		{name: "error/no X509Certificate", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:KeyInfo/ds:X509Data")
		}, wantMsg: "no X509Certificate"},
		{name: "error/no SigningCertificate", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, sspPath+"/xades:SigningCertificate")
		}, wantMsg: "no xades:SigningCertificate"},
		{name: "error/CertDigest not base64", edit: func(t *testing.T, s *sigDoc) {
			appendText(s.el(t, certPath+"/xades:CertDigest/ds:DigestValue"), "*")
		}, wantMsg: "CertDigest: illegal base64"},
		{name: "error/no CertDigest", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, certPath+"/xades:CertDigest")
		}, wantMsg: "CertDigest: missing"},
		{name: "error/CertDigest with an unknown digest method", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, certPath+"/xades:CertDigest/ds:DigestMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmldsig-more#md5")
		}, wantMsg: "CertDigest: unsupported digest method"},
		{name: "error/CertDigest of another certificate", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, certPath+"/xades:CertDigest/ds:DigestValue").SetText(sha256B64(otherCA.Cert.Raw))
		}, wantMsg: "no KeyInfo certificate matches"},
		{name: "error/signed serial number is another", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, certPath+"/xades:IssuerSerial/ds:X509SerialNumber").SetText(new(big.Int).Add(leaf.SerialNumber, big.NewInt(1)).String())
		}, wantMsg: "X509SerialNumber"},
		{name: "error/signed serial number is not a number", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, certPath+"/xades:IssuerSerial/ds:X509SerialNumber").SetText("0x" + leaf.SerialNumber.Text(16))
		}, wantMsg: "X509SerialNumber"},
		{name: "error/certificate with another serial number than the signed one", edit: func(t *testing.T, s *sigDoc) {
			// The renewed certificate in KeyInfo and its digest signed, but
			// the serial number of the fixture's.
			s.el(t, "ds:KeyInfo/ds:X509Data/ds:X509Certificate").SetText(b64(renewed.Leaf.Raw))
			s.el(t, certPath+"/xades:CertDigest/ds:DigestValue").SetText(sha256B64(renewed.Leaf.Raw))
		}, wantMsg: "X509SerialNumber"},
		{name: "error/ECDSA signing certificate", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:KeyInfo/ds:X509Data/ds:X509Certificate").SetText(b64(ecCert.Raw))
			s.el(t, certPath+"/xades:CertDigest/ds:DigestValue").SetText(sha256B64(ecCert.Raw))
			s.el(t, certPath+"/xades:IssuerSerial/ds:X509SerialNumber").SetText(ecCert.SerialNumber.String())
			s.remove(t, "ds:KeyInfo/ds:KeyValue")
		}, wantMsg: "not RSA"},
		{name: "error/KeyValue modulus of another key", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:KeyInfo/ds:KeyValue/ds:RSAKeyValue/ds:Modulus").SetText(b64(otherKey.N.Bytes()))
		}, wantMsg: "RSAKeyValue"},
		{name: "error/KeyValue of another exponent", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:KeyInfo/ds:KeyValue/ds:RSAKeyValue/ds:Exponent").SetText(b64([]byte{3}))
		}, wantMsg: "RSAKeyValue"},
		{name: "error/KeyValue modulus not base64", edit: func(t *testing.T, s *sigDoc) {
			appendText(s.el(t, "ds:KeyInfo/ds:KeyValue/ds:RSAKeyValue/ds:Modulus"), "*")
		}, wantMsg: "RSAKeyValue"},
		{name: "error/KeyValue exponent not base64", edit: func(t *testing.T, s *sigDoc) {
			appendText(s.el(t, "ds:KeyInfo/ds:KeyValue/ds:RSAKeyValue/ds:Exponent"), "*")
		}, wantMsg: "RSAKeyValue"},
		{name: "error/KeyValue without exponent", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:KeyInfo/ds:KeyValue/ds:RSAKeyValue/ds:Exponent")
		}, wantMsg: "RSAKeyValue"},

		// The signature value.
		{name: "error/unknown canonicalization of SignedInfo", seal: resignOnly, edit: func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:SignedInfo/ds:CanonicalizationMethod").CreateAttr("Algorithm", "urn:desconocido")
		}, wantMsg: "unsupported canonicalization method"},
		{name: "error/no SignatureValue", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:SignatureValue")
		}, wantMsg: "SignatureValue: missing"},
		{name: "error/SignatureValue not base64", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			appendText(s.el(t, "ds:SignatureValue"), "*")
		}, wantMsg: "SignatureValue: illegal base64"},
		{name: "error/signed with another key", seal: leaveAsIs, edit: func(t *testing.T, s *sigDoc) {
			s.resign(t, otherKey)
		}, wantMsg: "does not verify"},

		// The signed properties.
		{name: "error/no SigningTime", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, sspPath+"/xades:SigningTime")
		}, wantMsg: "no xades:SigningTime"},
		{name: "error/two SigningTime elements", edit: func(t *testing.T, s *sigDoc) {
			// An element given twice counts as missing, rather than one of
			// them being picked.
			st := s.el(t, sspPath+"/xades:SigningTime")
			second := st.Copy()
			second.SetText("2025-09-16T08:00:00-06:00")
			st.Parent().InsertChildAt(st.Index()+1, second)
		}, wantMsg: "no xades:SigningTime"},
		{name: "error/SigningTime not a time", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, sspPath+"/xades:SigningTime").SetText("15/09/2025 10:30")
		}, wantMsg: "SigningTime"},
		{name: "policy/none", edit: func(t *testing.T, s *sigDoc) {
			s.remove(t, sspPath+"/xades:SignaturePolicyIdentifier")
		}, wantErr: ErrPolicyMismatch, wantMsg: "not XAdES-EPES"},
		{name: "policy/another identifier", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, policyPath+"/xades:SigPolicyId/xades:Identifier").SetText("https://example.com/otra-politica.pdf")
		}, wantErr: ErrPolicyMismatch, wantMsg: "otra-politica"},
		{name: "policy/another digest method", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, policyPath+"/xades:SigPolicyHash/ds:DigestMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmlenc#sha512")
		}, wantErr: ErrPolicyMismatch},
		{name: "policy/another digest", edit: func(t *testing.T, s *sigDoc) {
			s.el(t, policyPath+"/xades:SigPolicyHash/ds:DigestValue").SetText(sha256B64([]byte("otra")))
		}, wantErr: ErrPolicyMismatch},

		// Trust.
		{name: "expired/signed after the certificate expired", edit: signingTime(leaf.NotAfter.Add(time.Second)),
			wantErr: ErrCertificateExpired, wantMsg: "signing time"},
		{name: "expired/signed before the certificate was valid", edit: signingTime(leaf.NotBefore.Add(-time.Second)),
			wantErr: ErrCertificateExpired, wantMsg: "signing time"},
		{name: "error/untrusted root", seal: leaveAsIs, opts: VerifyOptions{Roots: x509CertPool(t, otherCA.CertPEM())},
			wantMsg: "not trusted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := parseSigned(t, base)
			if tt.edit != nil {
				tt.edit(t, s)
			}
			switch tt.seal {
			case redigestAndResign:
				s.redigest(t)
				s.resign(t, key)
			case resignOnly:
				s.resign(t, key)
			}
			b := s.bytes(t)
			if tt.raw != nil {
				b = tt.raw(t, b)
			}
			_, err := VerifyWith(b, tt.opts)
			if err == nil {
				t.Fatal("Verify accepted the document")
			}
			wantErr := tt.wantErr
			if wantErr == nil {
				wantErr = ErrInvalidSignature
			}
			if !errors.Is(err, wantErr) {
				t.Errorf("err = %v, want it to wrap %v", err, wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
}

// newDocumentTransforms replaces the document reference's ds:Transforms
// with an empty one, for the caller to fill.
func (s *sigDoc) newDocumentTransforms(t *testing.T) *etree.Element {
	t.Helper()
	r := s.ref(t, refDocument)
	r.RemoveChild(r.SelectElement("ds:Transforms"))
	ts := etree.NewElement("ds:Transforms")
	r.InsertChildAt(0, ts)
	return ts
}

// xpathTransform replaces the document reference's transforms with an
// XPath filter of expr, followed by exclusive C14N. Unless prefix is ds
// (declared on the signature), the ds:XPath element binds it to ns.
func xpathTransform(expr, prefix, ns string) func(t *testing.T, s *sigDoc) {
	return func(t *testing.T, s *sigDoc) {
		ts := s.newDocumentTransforms(t)
		x := ts.CreateElement("ds:Transform")
		x.CreateAttr("Algorithm", AlgorithmXPathFilter)
		xp := x.CreateElement("ds:XPath")
		if prefix != "ds" {
			xp.CreateAttr("xmlns:"+prefix, ns)
		}
		xp.SetText(expr)
		ts.CreateElement("ds:Transform").CreateAttr("Algorithm", AlgorithmExcC14N)
	}
}

// TestVerifyRefusalSealing checks the test's own sealing: a document taken
// apart and sealed again without a change, or with the other algorithms
// Verify accepts, still verifies, so that the refusals above come from
// their changes and not from the sealing.
func TestVerifyRefusalSealing(t *testing.T) {
	t.Parallel()
	base := signedExample(t)
	caPEM, err := os.ReadFile(fixtureCAPEM)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509CertPool(t, caPEM)
	tests := []struct {
		name string
		edit func(t *testing.T, s *sigDoc)
	}{
		{"ok/unchanged", func(t *testing.T, s *sigDoc) {}},
		{"ok/RSA-SHA512 and SHA-512 digests", func(t *testing.T, s *sigDoc) {
			s.el(t, "ds:SignedInfo/ds:SignatureMethod").CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512")
			for _, dm := range s.el(t, "ds:SignedInfo").FindElements("ds:Reference/ds:DigestMethod") {
				dm.CreateAttr("Algorithm", "http://www.w3.org/2001/04/xmlenc#sha512")
			}
		}},
		{"ok/exclusive canonicalization of KeyInfo", func(t *testing.T, s *sigDoc) {
			ts := etree.NewElement("ds:Transforms")
			ts.CreateElement("ds:Transform").CreateAttr("Algorithm", string(dsig.CanonicalXML10ExclusiveAlgorithmId))
			s.ref(t, refKeyInfo).InsertChildAt(0, ts)
		}},
		{"ok/SHA-1 certificate digest", func(t *testing.T, s *sigDoc) {
			const cert = "ds:Object/xades:QualifyingProperties/xades:SignedProperties/xades:SignedSignatureProperties/xades:SigningCertificate/xades:Cert/xades:CertDigest"
			s.el(t, cert+"/ds:DigestMethod").CreateAttr("Algorithm", "http://www.w3.org/2000/09/xmldsig#sha1")
			sum := sha1.Sum(fixture(t).Leaf.Raw)
			s.el(t, cert+"/ds:DigestValue").SetText(b64(sum[:]))
		}},
		{"ok/no KeyValue", func(t *testing.T, s *sigDoc) {
			s.remove(t, "ds:KeyInfo/ds:KeyValue")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := parseSigned(t, base)
			tt.edit(t, s)
			s.redigest(t)
			s.resign(t, fixture(t).Key)
			b := s.bytes(t)
			if _, err := VerifyWith(b, VerifyOptions{Roots: roots}); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

// badNamespace returns an edit that adds a ds:Object holding an element
// x, a reference to x with exclusive canonicalization, and a declaration of
// the xml prefix to another namespace at where: on an ancestor of x, on x,
// or on a child of x.
func badNamespace(where string) func(*testing.T, *sigDoc) {
	return func(t *testing.T, s *sigDoc) {
		obj := s.sig.CreateElement("ds:Object")
		x := obj.CreateElement("x")
		x.CreateAttr("Id", "mal")
		switch where {
		case "ancestor":
			obj.CreateAttr("xmlns:xml", "urn:otro")
		case "target":
			x.CreateAttr("xmlns:xml", "urn:otro")
		case "descendant":
			x.CreateElement("y").CreateAttr("xmlns:xml", "urn:otro")
		default:
			t.Fatalf("where %q", where)
		}
		r := s.ref(t, refKeyInfo).Copy()
		r.RemoveAttr("Id")
		r.CreateAttr("URI", "#mal")
		ts := etree.NewElement("ds:Transforms")
		ts.CreateElement("ds:Transform").CreateAttr("Algorithm", string(dsig.CanonicalXML10ExclusiveAlgorithmId))
		r.InsertChildAt(0, ts)
		s.el(t, "ds:SignedInfo").AddChild(r)
	}
}

// ecdsaCertificate is a self-signed ECDSA certificate valid at the golden
// time, a key type Verify does not accept for signing.
func ecdsaCertificate(t *testing.T) *x509.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242),
		Subject:      pkix.Name{CommonName: "ECDSA"},
		NotBefore:    goldenTime.AddDate(-1, 0, 0),
		NotAfter:     goldenTime.AddDate(1, 0, 0),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
