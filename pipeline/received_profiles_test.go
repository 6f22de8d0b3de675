package pipeline

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda"
	"facturad/hacienda/trust"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
	"facturad/signer/certmint"
)

// supplierPolicy is the policy a real supplier's document of
// signer/testdata/real/suppliers commits to, as its signer wrote it.
func supplierPolicy(t *testing.T, name string) signer.Policy {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("../signer/testdata/real/suppliers", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := signer.VerifyWith(doc, signer.VerifyOptions{AnyPolicy: true})
	if err != nil || res.Policy == nil {
		t.Fatalf("%s: no policy read (%v)", name, err)
	}
	return *res.Policy
}

// TestReceiveOtherSignersProfiles receives a v4.4 document of the harness's
// company signed, with its key, in the profiles real suppliers' software
// writes: the tax authority's own (DSS: XPath filter, exclusive C14N,
// SHA-1 certificate digest, no policy), XAdES-EPES under the v4.3 and v4.1
// policies, and two signatures made by xmlsec1, a signer written by others
// (C14N with comments, SHA-1 and RSA-SHA1, the v4.3 policy; the DSS filter
// with SHA-1 digests and no policy). Each is received on both stores and
// its policy recorded; each, with one total changed after signing, is
// refused.
func TestReceiveOtherSignersProfiles(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) { testReceiveOtherSignersProfiles(t, sk.open) })
	}
}

func testReceiveOtherSignersProfiles(t *testing.T, open func(testing.TB) fullStore) {
	b := setup(t, setupOptions{store: open})
	_, buyer := b.newCompany(t, buyerID)
	cert, err := b.cache.Certificate(context.Background(), b.company.ID)
	if err != nil {
		t.Fatal(err)
	}
	chain := append([]*x509.Certificate{cert.Leaf}, cert.Chain...)
	at := func() time.Time { return time.Now() }
	policyV43 := supplierPolicy(t, "firmador-php-factura-v43-2023-sandbox.xml")
	policyV41 := supplierPolicy(t, "xadessignercr-factura-v42-2019-sandbox.xml")
	profiles := []struct {
		name   string
		sign   func(t *testing.T, unsigned []byte) []byte
		policy string
	}{
		{"the tax authority's (DSS)", func(t *testing.T, u []byte) []byte {
			return must(t)(signer.SignBES(u, cert.Key, chain, signer.WithClock(at)))
		}, ""},
		{"XAdES-EPES under the v4.3 policy", func(t *testing.T, u []byte) []byte {
			return must(t)(signer.Sign(u, cert.Key, chain, policyV43, signer.WithClock(at)))
		}, policyV43.Identifier},
		{"XAdES-EPES under the v4.1 policy", func(t *testing.T, u []byte) []byte {
			return must(t)(signer.Sign(u, cert.Key, chain, policyV41, signer.WithClock(at)))
		}, policyV41.Identifier},
		{"xmlsec1: C14N with comments, SHA-1, the v4.3 policy", func(t *testing.T, u []byte) []byte {
			// A comment the reference does not cover: a same-document
			// reference selects the document without its comments.
			u = bytes.Replace(u, []byte("<Clave>"), []byte("<!-- comentario --><Clave>"), 1)
			return xmlsecSign(t, u, cert, xmlsecProfile{
				c14n:       "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments",
				transforms: `<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/><ds:Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"/>`,
				digest:     signer.AlgorithmSHA1, method: signer.AlgorithmRSASHA1, policy: &policyV43,
			})
		}, policyV43.Identifier},
		{"xmlsec1: the DSS filter, SHA-1 digests, no policy", func(t *testing.T, u []byte) []byte {
			return xmlsecSign(t, u, cert, xmlsecProfile{
				c14n:       signer.AlgorithmExcC14N,
				transforms: `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>not(ancestor-or-self::ds:Signature)</ds:XPath></ds:Transform><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>`,
				digest:     signer.AlgorithmSHA1, method: signer.AlgorithmRSASHA256,
			})
		}, ""},
	}
	for i, pf := range profiles {
		t.Run(pf.name, func(t *testing.T) {
			issued := b.issueTo(t, buyerID, fmt.Sprintf("fe-profile-%d", i))
			sig := bytes.Index(issued, []byte("<ds:Signature"))
			end := bytes.LastIndex(issued, []byte("</"))
			unsigned := append(bytes.Clone(issued[:sig]), issued[end:]...)
			signed := pf.sign(t, unsigned)

			counted := testutil.ToFloat64(b.p.metrics.supplier.WithLabelValues("unchecked"))
			tampered := bytes.Replace(signed, []byte("<TotalComprobante>"), []byte("<TotalComprobante>1"), 1)
			_, err := b.receive(buyer, receiveJSON(tampered, "1", fmt.Sprintf("tampered-%d", i), nil))
			requireField(t, err, "xml", "signature does not verify")

			out, err := b.receive(buyer, receiveJSON(signed, "1", fmt.Sprintf("profile-%d", i), nil))
			if err != nil {
				t.Fatalf("received: %v", err)
			}
			r := out.Received
			if out.Failed || r.Numero == 0 {
				t.Fatalf("not numbered: %+v %s", out, r.LastError)
			}
			if r.FirmaPolitica != pf.policy {
				t.Errorf("FirmaPolitica %q, want %q", r.FirmaPolitica, pf.policy)
			}
			// Counted once, for the document received (not the tampered
			// one); the repeat below checks it again without counting.
			if _, err := b.receive(buyer, receiveJSON(signed, "1", fmt.Sprintf("profile-%d", i), nil)); err != nil {
				t.Fatalf("repeat: %v", err)
			}
			if got := testutil.ToFloat64(b.p.metrics.supplier.WithLabelValues("unchecked")) - counted; got != 1 {
				t.Errorf("supplier_signatures_total{trust=\"unchecked\"} rose by %v, want 1", got)
			}
			stored, err := b.p.o.Received.ReceivedByClave(context.Background(), r.CompanyID, r.Clave)
			if err != nil || stored.FirmaPolitica != pf.policy || !bytes.Equal(stored.SupplierXML, signed) {
				t.Errorf("stored policy %q (%v), want %q and the XML as uploaded", stored.FirmaPolitica, err, pf.policy)
			}
		})
	}
}

// TestReceiveRefusesAnotherSigner receives a document of the harness's
// company signed with another company's certificate: the signature holds,
// but it is not the Emisor's.
func TestReceiveRefusesAnotherSigner(t *testing.T) {
	b := setup(t, setupOptions{})
	_, buyer := b.newCompany(t, buyerID)
	other, err := b.cache.Certificate(context.Background(), buyer.CompanyID)
	if err != nil {
		t.Fatal(err)
	}
	issued := b.issueTo(t, buyerID, "fe-other")
	sig := bytes.Index(issued, []byte("<ds:Signature"))
	end := bytes.LastIndex(issued, []byte("</"))
	unsigned := append(bytes.Clone(issued[:sig]), issued[end:]...)
	signed := must(t)(signer.Sign(unsigned, other.Key, append([]*x509.Certificate{other.Leaf}, other.Chain...), signer.PolicyV44))
	_, err = b.receive(buyer, receiveJSON(signed, "1", "other", nil))
	requireField(t, err, "xml", "not of its Emisor 3101123456")
}

// TestSupplierSignerNationalPKI checks the trust rule of a supplier's
// certificate against a national PKI (here a test one): one that chains is
// trusted as such, one issued outside it rests on the tax authority, and
// one that names its authority without chaining to it is refused.
func TestSupplierSignerNationalPKI(t *testing.T) {
	national, err := certmint.NewCA(certmint.CAOptions{CommonName: "CA SINPE - PERSONA JURIDICA v2"})
	if err != nil {
		t.Fatal(err)
	}
	impostor, err := certmint.NewCA(certmint.CAOptions{CommonName: "CA SINPE - PERSONA JURIDICA v2"})
	if err != nil {
		t.Fatal(err)
	}
	outside, err := certmint.NewCA(certmint.CAOptions{CommonName: "CA PERSONA JURIDICA - PRODUCCION"})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(national.Cert)
	pki := &trust.National{Roots: roots, Intermediates: x509.NewCertPool(), Certificates: []*x509.Certificate{national.Cert}}
	b := setup(t, setupOptions{pipeline: func(o *Options) { o.SupplierPKI = pki }})
	doc := &hacienda.Document{Emisor: hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "02", Numero: "3101123456"}}}
	for _, tt := range []struct {
		name  string
		ca    *certmint.CA
		trust string
		ok    bool
	}{
		{"chains to the national PKI", national, "national_pki", true},
		{"issued outside it", outside, "tax_authority", true},
		{"names its authority without chaining", impostor, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: "3101123456",
				Name: "PROVEEDOR", CA: tt.ca, Key: certmint.TestKey(3)})
			if err != nil {
				t.Fatal(err)
			}
			res := &signer.VerifyResult{Certificate: m.Leaf, SigningTime: time.Now()}
			trust, err := b.p.supplierSigner(doc, res)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if trust != tt.trust {
				t.Errorf("rests on %q, want %q", trust, tt.trust)
			}
			if !tt.ok && !strings.Contains(err.Error(), "does not chain") {
				t.Errorf("err = %v, want it to say it does not chain", err)
			}
		})
	}
}

func must(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// xmlsecProfile is a signature for xmlsec1 to make: SignedInfo's
// canonicalization, the document reference's transforms, the digest and
// signature methods, and the policy (none for XAdES-BES).
type xmlsecProfile struct {
	c14n, transforms, digest, method string
	policy                           *signer.Policy
}

// xmlsecSign signs unsigned with xmlsec1 from a template of the profile:
// this package writes the XAdES properties (the certificate digest, the
// signing time, the policy), xmlsec1 computes every digest and the
// signature value.
func xmlsecSign(t *testing.T, unsigned []byte, cert *signer.Certificate, p xmlsecProfile) []byte {
	t.Helper()
	bin := xmlcheck.Tool(t, "xmlsec1")
	// Not t.TempDir: its name comes from the test's, and xmlsec1 splits
	// --privkey-pem on commas.
	dir, err := os.MkdirTemp("", "xmlsec")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	key, ok := cert.Key.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("key %T", cert.Key)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Leaf.Raw})
	write := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	sum := sha1.Sum(cert.Leaf.Raw)
	policy := ""
	if p.policy != nil {
		policy = `<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId><xades:Identifier>` + p.policy.Identifier +
			`</xades:Identifier></xades:SigPolicyId><xades:SigPolicyHash><ds:DigestMethod Algorithm="` + p.policy.DigestMethod +
			`"/><ds:DigestValue>` + p.policy.Digest + `</ds:DigestValue></xades:SigPolicyHash></xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>`
	}
	tmpl := `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="sig-1"><ds:SignedInfo>` +
		`<ds:CanonicalizationMethod Algorithm="` + p.c14n + `"/><ds:SignatureMethod Algorithm="` + p.method + `"/>` +
		`<ds:Reference URI=""><ds:Transforms>` + p.transforms + `</ds:Transforms><ds:DigestMethod Algorithm="` + p.digest + `"/><ds:DigestValue/></ds:Reference>` +
		`<ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#props-1"><ds:DigestMethod Algorithm="` + p.digest + `"/><ds:DigestValue/></ds:Reference>` +
		`</ds:SignedInfo><ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo>` +
		`<ds:Object><xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Target="#sig-1"><xades:SignedProperties Id="props-1"><xades:SignedSignatureProperties>` +
		`<xades:SigningTime>` + time.Now().Format("2006-01-02T15:04:05-07:00") + `</xades:SigningTime>` +
		`<xades:SigningCertificate><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><ds:DigestValue>` +
		base64.StdEncoding.EncodeToString(sum[:]) + `</ds:DigestValue></xades:CertDigest><xades:IssuerSerial><ds:X509IssuerName>` + cert.Leaf.Issuer.String() +
		`</ds:X509IssuerName><ds:X509SerialNumber>` + cert.Leaf.SerialNumber.String() + `</ds:X509SerialNumber></xades:IssuerSerial></xades:Cert></xades:SigningCertificate>` +
		policy + `</xades:SignedSignatureProperties></xades:SignedProperties></xades:QualifyingProperties></ds:Object></ds:Signature>`
	end := bytes.LastIndex(unsigned, []byte("</"))
	doc := append(append(bytes.Clone(unsigned[:end]), tmpl...), unsigned[end:]...)
	out := filepath.Join(dir, "signed.xml")
	cmd := exec.Command(bin, "--sign", "--privkey-pem", write("key.pem", keyPEM)+","+write("cert.pem", certPEM),
		"--id-attr:Id", xmlcheck.NamespaceXAdES+":SignedProperties", "--output", out, write("template.xml", doc))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xmlsec1 --sign: %v: %s", err, b)
	}
	signed, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}
