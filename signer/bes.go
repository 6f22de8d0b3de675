package signer

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/beevik/etree"
)

// SignBES appends an enveloped XAdES-BES signature to doc in the profile
// the tax authority signs its answers with (the EU DSS library's, as in
// its real answers: testdata/real/hacienda-answer-2023.xml): exclusive
// C14N, RSA-SHA256, a document reference with the XPath filter
// not(ancestor-or-self::ds:Signature), a SHA-1 certificate digest, the
// issuer in RFC 2253 form, the signing time in UTC and no signature policy.
// KeyInfo carries the signing certificate alone, as the real answers do.
//
// The built-in sandbox signs its answers with it, so that the service
// verifies answers of the real shape. It takes the same options as Sign
// (WithClock and WithID; WithClaimedRole and WithCanonicalInput do not
// apply) and the same keys.
func SignBES(doc []byte, key crypto.Signer, chain []*x509.Certificate, opts ...Option) ([]byte, error) {
	o := newSignOptions(opts)
	s, err := newSigning(key, chain, PolicyV44, &o) // the policy is checked, not written
	if err != nil {
		return nil, err
	}
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	root, insertAt, err := readRoot(doc)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	id := strings.ReplaceAll(s.id, "-", "")
	sig, err := s.besElement(root, id)
	if err != nil {
		return nil, err
	}
	return spliceSignature(doc, insertAt, sig, 1), nil
}

// besElement builds and signs the XAdES-BES ds:Signature as the last child
// of root.
func (s *signing) besElement(root *etree.Element, id string) (*etree.Element, error) {
	sig := root.CreateElement("ds:Signature")
	sig.CreateAttr("xmlns:ds", NamespaceDS)
	sig.CreateAttr("Id", "id-"+id)
	signedInfo := sig.CreateElement("ds:SignedInfo")
	sigValue := sig.CreateElement("ds:SignatureValue")
	sigValue.CreateAttr("Id", "value-id-"+id)
	sig.CreateElement("ds:KeyInfo").CreateElement("ds:X509Data").CreateElement("ds:X509Certificate").
		SetText(base64.StdEncoding.EncodeToString(s.leaf.Raw))

	qp := sig.CreateElement("ds:Object").CreateElement("xades:QualifyingProperties")
	qp.CreateAttr("xmlns:xades", NamespaceXAdES)
	qp.CreateAttr("Target", "#id-"+id)
	sp := qp.CreateElement("xades:SignedProperties")
	sp.CreateAttr("Id", "xades-id-"+id)
	ssp := sp.CreateElement("xades:SignedSignatureProperties")
	ssp.CreateElement("xades:SigningTime").SetText(s.at.UTC().Format("2006-01-02T15:04:05Z"))
	cert := ssp.CreateElement("xades:SigningCertificate").CreateElement("xades:Cert")
	certDigest := cert.CreateElement("xades:CertDigest")
	certDigest.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA1)
	sum := sha1.Sum(s.leaf.Raw)
	certDigest.CreateElement("ds:DigestValue").SetText(base64.StdEncoding.EncodeToString(sum[:]))
	issuerSerial := cert.CreateElement("xades:IssuerSerial")
	issuer, err := rfc2253(s.leaf.RawIssuer)
	if err != nil {
		return nil, fmt.Errorf("sign: issuer name: %w", err)
	}
	issuerSerial.CreateElement("ds:X509IssuerName").SetText(issuer)
	issuerSerial.CreateElement("ds:X509SerialNumber").SetText(s.leaf.SerialNumber.String())
	format := sp.CreateElement("xades:SignedDataObjectProperties").CreateElement("xades:DataObjectFormat")
	format.CreateAttr("ObjectReference", "#r-id-1")
	format.CreateElement("xades:MimeType").SetText("application/octet-stream")

	docC14N, err := canonicalize(AlgorithmExcC14N, "", root, []*etree.Element{sig})
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize the document: %w", err)
	}
	spC14N, err := canonicalize(AlgorithmExcC14N, "", sp, nil)
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize SignedProperties: %w", err)
	}
	signedInfo.CreateElement("ds:CanonicalizationMethod").CreateAttr("Algorithm", AlgorithmExcC14N)
	signedInfo.CreateElement("ds:SignatureMethod").CreateAttr("Algorithm", AlgorithmRSASHA256)
	besReference(signedInfo, "r-id-1", "", "", docC14N)
	besReference(signedInfo, "", "#xades-id-"+id, TypeSignedProperties, spC14N)

	siC14N, err := canonicalize(AlgorithmExcC14N, "", signedInfo, nil)
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize SignedInfo: %w", err)
	}
	h := sha256.Sum256(siC14N)
	value, err := s.key.Sign(rand.Reader, h[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	sigValue.SetText(base64.StdEncoding.EncodeToString(value))
	return sig, nil
}

// besReference adds a reference over canonical, with the document's
// XPath filter when uri is "" (the whole document), then exclusive C14N.
func besReference(signedInfo *etree.Element, id, uri, typ string, canonical []byte) {
	ref := signedInfo.CreateElement("ds:Reference")
	if id != "" {
		ref.CreateAttr("Id", id)
	}
	ref.CreateAttr("Type", typ)
	ref.CreateAttr("URI", uri)
	ts := ref.CreateElement("ds:Transforms")
	if uri == "" {
		x := ts.CreateElement("ds:Transform")
		x.CreateAttr("Algorithm", AlgorithmXPathFilter)
		x.CreateElement("ds:XPath").SetText("not(ancestor-or-self::ds:Signature)")
	}
	ts.CreateElement("ds:Transform").CreateAttr("Algorithm", AlgorithmExcC14N)
	ref.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA256)
	sum := sha256.Sum256(canonical)
	ref.CreateElement("ds:DigestValue").SetText(base64.StdEncoding.EncodeToString(sum[:]))
}

// rfc2253Names are the attribute types RFC 2253 names by a keyword; any
// other is written as its OID and the hex of its DER value, as DSS writes
// the SERIALNUMBER of Costa Rican names (2.5.4.5=#1310…).
var rfc2253Names = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "STREET",
	"2.5.4.10": "O", "2.5.4.11": "OU", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
}

// rfc2253 writes a DER Name as RFC 2253 does: the last RDN first.
func rfc2253(der []byte) (string, error) {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) > 0 {
		return "", fmt.Errorf("not a DER name: %v", err)
	}
	var rdns []string
	for i := len(seq) - 1; i >= 0; i-- {
		var atvs []string
		for _, atv := range seq[i] {
			name, known := rfc2253Names[atv.Type.String()]
			str, isString := atv.Value.(string)
			if !known || !isString {
				raw, err := asn1.Marshal(atv.Value)
				if err != nil {
					return "", err
				}
				atvs = append(atvs, atv.Type.String()+"=#"+hex.EncodeToString(raw))
				continue
			}
			atvs = append(atvs, name+"="+escape2253(str))
		}
		rdns = append(rdns, strings.Join(atvs, "+"))
	}
	return strings.Join(rdns, ","), nil
}

func escape2253(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case strings.ContainsRune(",+\"\\<>;", r),
			i == 0 && (r == ' ' || r == '#'),
			i == len(s)-1 && r == ' ':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
