package signer

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/beevik/etree"

	"facturad/hacienda"
)

// Namespaces and algorithm identifiers of the signature profile.
const (
	NamespaceDS    = "http://www.w3.org/2000/09/xmldsig#"
	NamespaceXAdES = "http://uri.etsi.org/01903/v1.3.2#"

	// AlgorithmC14N10 is inclusive Canonical XML 1.0 without comments, the
	// method the v4.4 annex names. It is used for SignedInfo and, by the
	// XMLDSig default, for every reference.
	AlgorithmC14N10      = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
	AlgorithmRSASHA256   = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	AlgorithmSHA256      = "http://www.w3.org/2001/04/xmlenc#sha256"
	AlgorithmEnveloped   = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
	TypeSignedProperties = "http://uri.etsi.org/01903#SignedProperties"
)

// Policy is the XAdES-EPES signature policy a signature commits to: the
// policy document's identifier and the digest of that document.
type Policy struct {
	// Identifier is the policy URL, written as is (already percent-encoded).
	Identifier string
	// DigestMethod is the URI of the digest algorithm of Digest.
	DigestMethod string
	// Digest is the base64 digest of the policy document.
	Digest string
}

// PolicyV44 is the policy of the v4.4 documents (Anexo 2 of the v4.4
// annexes): the resolution published by the tax authority and its SHA-256.
var PolicyV44 = Policy{
	Identifier:   "https://cdn.comprobanteselectronicos.go.cr/xml-schemas/Resoluci%C3%B3n_General_sobre_disposiciones_t%C3%A9cnicas_comprobantes_electr%C3%B3nicos_para_efectos_tributarios.pdf",
	DigestMethod: AlgorithmSHA256,
	Digest:       "DWxin1xWOeI8OuWQXazh4VjLWAaCLAA954em7DMh0h8=",
}

func (p Policy) validate() error {
	if p.Identifier == "" || p.DigestMethod == "" || p.Digest == "" {
		return errors.New("signature policy is incomplete")
	}
	if _, err := base64.StdEncoding.DecodeString(p.Digest); err != nil {
		return fmt.Errorf("signature policy digest: %w", err)
	}
	return nil
}

// Option changes how Sign works.
type Option func(*signOptions)

type signOptions struct {
	now            func() time.Time
	id             string
	role           string
	canonicalInput bool
	fastPath       *bool // tests: set to whether the canonical-input path was taken
}

// newSignOptions applies opts to the defaults.
func newSignOptions(opts []Option) signOptions {
	o := signOptions{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithClock sets the clock that gives the SigningTime (default time.Now).
// The certificate must be valid at that instant.
func WithClock(now func() time.Time) Option {
	return func(o *signOptions) { o.now = now }
}

// WithID sets the identifier the element ids of this signature derive from
// (Signature-<id>, SignedProperties-Signature-<id>, ...). It must be unique
// per signature; the default is a fresh random UUID. Golden tests fix it.
func WithID(id string) Option {
	return func(o *signOptions) { o.id = id }
}

// WithClaimedRole adds xades:SignerRole/ClaimedRoles/ClaimedRole, used by
// counter-signatures ("Receptor", "Endosante1", ...). Signatures the issuer
// sends to the tax authority do not need it. Note that the
// enveloped-signature transform removes only its own signature, so a
// signature added later to a document changes what an earlier one covers
// and breaks it; documents with counter-signatures are never sent to the
// tax authority.
func WithClaimedRole(role string) Option {
	return func(o *signOptions) { o.role = role }
}

// Sign appends an enveloped XAdES-EPES signature to doc, as the last child
// of its root element, and returns the signed document. The bytes of doc
// are kept as they are; the signature is inserted right before the root's
// end tag.
//
// chain[0] is the certificate of key; the rest of chain (its CA
// certificates, if any) is carried in KeyInfo after it. key must be an RSA
// key of at least 2048 bits. The signature uses RSA-SHA256, SHA-256 digests
// and inclusive C14N 1.0, computed on the elements in their final place in
// the document. With WithCanonicalInput, a document that is checked to be
// in canonical form already is digested as it is, without being parsed.
//
// Sign is safe for concurrent use with the same key.
func Sign(doc []byte, key crypto.Signer, chain []*x509.Certificate, p Policy, opts ...Option) ([]byte, error) {
	o := newSignOptions(opts)
	s, err := newSigning(key, chain, p, &o)
	if err != nil {
		return nil, err
	}
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	root, docDigest, insertAt, err := documentRoot(doc, &o)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	sig, err := s.signatureElement(root, docDigest[:])
	if err != nil {
		return nil, err
	}
	return spliceSignature(doc, insertAt, sig, len(chain)), nil
}

// signing is one signature in the making: the key and certificates that
// sign, the policy, and what the options and the clock fixed.
type signing struct {
	key    crypto.Signer
	chain  []*x509.Certificate
	leaf   *x509.Certificate
	pub    *rsa.PublicKey
	policy Policy
	at     time.Time
	id     string
	role   string
}

// newSigning checks the key, the signing certificate and the policy, reads
// the clock and makes the signature's id unless the options fixed one.
func newSigning(key crypto.Signer, chain []*x509.Certificate, p Policy, o *signOptions) (signing, error) {
	if len(chain) == 0 || chain[0] == nil {
		return signing{}, errors.New("sign: no signing certificate")
	}
	leaf := chain[0]
	pub, ok := key.Public().(*rsa.PublicKey)
	if !ok {
		return signing{}, fmt.Errorf("sign: %w: key type %T", ErrUnsupportedKey, key.Public())
	}
	if pub.N.BitLen() < 2048 {
		return signing{}, fmt.Errorf("sign: %w: %d bits", ErrUnsupportedKey, pub.N.BitLen())
	}
	if leafPub, ok := leaf.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(leafPub) {
		return signing{}, errors.New("sign: the key does not belong to the signing certificate")
	}
	if err := p.validate(); err != nil {
		return signing{}, fmt.Errorf("sign: %w", err)
	}
	signingTime := o.now()
	if err := checkValidity(leaf, signingTime); err != nil {
		return signing{}, fmt.Errorf("sign: %w", err)
	}
	id := o.id
	if !validID(id) {
		return signing{}, fmt.Errorf("sign: id %q: use letters, digits, '-', '_' and '.' only", id)
	}
	if id == "" {
		var err error
		if id, err = newUUID(); err != nil {
			return signing{}, fmt.Errorf("sign: %w", err)
		}
	}
	return signing{key: key, chain: chain, leaf: leaf, pub: pub, policy: p, at: signingTime, id: id, role: o.role}, nil
}

// documentRoot returns the root element the signature goes under, the
// digest of the document as the enveloped-signature transform sees it and
// the offset of the root's end tag. With WithCanonicalInput, a document
// that scans as canonical is digested as it is; any other is parsed.
func documentRoot(doc []byte, o *signOptions) (root *etree.Element, docDigest [sha256.Size]byte, insertAt int, err error) {
	if o.canonicalInput {
		// The root element's bytes are their own canonical form: the
		// document digest is their SHA-256, and the signature elements need
		// only the root's namespace declarations to be canonicalized in
		// their final place.
		if cr, ok := scanCanonical(doc); ok {
			root = cr.element()
			docDigest, insertAt = sha256.Sum256(doc[cr.start:cr.end]), cr.endTag
		}
	}
	if o.fastPath != nil {
		*o.fastPath = root != nil
	}
	if root == nil {
		var digest []byte
		if root, digest, insertAt, err = parseDocument(doc); err != nil {
			return nil, docDigest, 0, err
		}
		copy(docDigest[:], digest)
	}
	return root, docDigest, insertAt, nil
}

// signatureElement builds the ds:Signature element as the last child of
// root, with the references to the document (whose digest is docDigest),
// to KeyInfo and to the signed properties, and signs it.
func (s *signing) signatureElement(root *etree.Element, docDigest []byte) (*etree.Element, error) {
	ids := newSignatureIDs(s.id)
	sig := root.CreateElement("ds:Signature")
	sig.CreateAttr("xmlns:ds", NamespaceDS)
	sig.CreateAttr("Id", ids.signature)
	signedInfo := sig.CreateElement("ds:SignedInfo")
	sigValue := sig.CreateElement("ds:SignatureValue")
	sigValue.CreateAttr("Id", ids.signatureValue)
	keyInfo := buildKeyInfo(sig, ids.keyInfo, s.chain, s.pub)
	signedProps := buildQualifyingProperties(sig, ids, s.leaf, s.policy, s.at, s.role)

	keyInfoDigest, err := digestOf(keyInfo)
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize KeyInfo: %w", err)
	}
	signedPropsDigest, err := digestOf(signedProps)
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize SignedProperties: %w", err)
	}

	signedInfo.CreateElement("ds:CanonicalizationMethod").CreateAttr("Algorithm", AlgorithmC14N10)
	signedInfo.CreateElement("ds:SignatureMethod").CreateAttr("Algorithm", AlgorithmRSASHA256)
	addReference(signedInfo, ids.reference, "", "", docDigest, AlgorithmEnveloped)
	addReference(signedInfo, ids.keyInfoReference, "#"+ids.keyInfo, "", keyInfoDigest)
	addReference(signedInfo, ids.signedPropertiesReference, "#"+ids.signedProperties, TypeSignedProperties, signedPropsDigest)

	siC14N, err := c14n10(signedInfo, nil)
	if err != nil {
		return nil, fmt.Errorf("sign: canonicalize SignedInfo: %w", err)
	}
	if err := s.signValue(siC14N, sigValue); err != nil {
		return nil, err
	}
	return sig, nil
}

// signValue signs siC14N, the canonicalized SignedInfo, with the key and
// writes the value into sigValue.
func (s *signing) signValue(siC14N []byte, sigValue *etree.Element) error {
	h := sha256.Sum256(siC14N)
	value, err := s.key.Sign(rand.Reader, h[:], crypto.SHA256)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	sigValue.SetText(base64.StdEncoding.EncodeToString(value))
	return nil
}

// spliceSignature returns a copy of doc with sig written, in canonical
// form, at offset insertAt; certs is the number of certificates it
// carries, to size the buffer.
func spliceSignature(doc []byte, insertAt int, sig *etree.Element, certs int) []byte {
	var sigXML bytes.Buffer
	sigXML.Grow(4096 + 1500*certs)
	sig.WriteTo(&sigXML, &etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true})

	out := make([]byte, 0, len(doc)+sigXML.Len())
	out = append(out, doc[:insertAt]...)
	out = append(out, sigXML.Bytes()...)
	out = append(out, doc[insertAt:]...)
	return out
}

// parseDocument parses doc, refuses what checkDocument refuses, and
// returns its root element, the digest of the canonicalized root (what the
// enveloped-signature transform leaves of the signed document) and the
// offset of the root's end tag.
func parseDocument(doc []byte) (*etree.Element, []byte, int, error) {
	root, insertAt, err := readRoot(doc)
	if err != nil {
		return nil, nil, 0, err
	}
	digest, err := digestOf(root)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("canonicalize document: %w", err)
	}
	return root, digest, insertAt, nil
}

// readRoot parses doc, refuses what checkDocument refuses, and returns its
// root element and the offset of the root's end tag, where a signature
// goes.
func readRoot(doc []byte) (*etree.Element, int, error) {
	d, err := readXML(doc)
	if err != nil {
		return nil, 0, fmt.Errorf("parse document: %w", err)
	}
	root := d.Root()
	if root == nil {
		return nil, 0, errors.New("document has no root element")
	}
	if err := checkDocument(d); err != nil {
		return nil, 0, err
	}
	insertAt, err := rootEndTag(doc, root.FullTag())
	if err != nil {
		return nil, 0, err
	}
	return root, insertAt, nil
}

// rootEndTag returns the offset of the root element's end tag in doc, where
// the signature goes. The document must end with that end tag (trailing
// white space allowed): trailing comments or processing instructions are
// refused rather than guessed around.
func rootEndTag(doc []byte, rootName string) (int, error) {
	s := bytes.TrimRight(doc, " \t\r\n")
	if len(s) == 0 || s[len(s)-1] != '>' {
		return 0, errors.New("document does not end with the root element's end tag")
	}
	i := bytes.LastIndex(s, []byte("</"))
	if i < 0 || strings.TrimSpace(string(s[i+2:len(s)-1])) != rootName {
		return 0, errors.New("document does not end with the root element's end tag")
	}
	return i, nil
}

// checkDocument refuses the few XML constructs on which this package's
// parser and canonical XML could disagree with other verifiers: a DOCTYPE
// (it can default attributes), processing instructions, elements or text
// outside the root element (canonical XML keeps them, the signature here
// covers the root),
// and tab, CR or LF characters in attribute values (an XML parser normalises
// literal ones to spaces, which the parser used here does not do). No v4.4
// document needs any of them.
func checkDocument(d *etree.Document) error {
	roots := 0
	for _, t := range d.Child {
		switch t := t.(type) {
		case *etree.Element:
			// The parser takes content after the root element; the
			// signature covers the first root only, so more is unsigned
			// content riding along.
			if roots++; roots > 1 {
				return fmt.Errorf("document has content after its root element (<%s>)", t.FullTag())
			}
		case *etree.CharData:
			if strings.TrimSpace(t.Data) != "" {
				return errors.New("document has text outside its root element")
			}
		case *etree.Directive:
			return errors.New("document has a DOCTYPE or other directive")
		case *etree.ProcInst:
			if t.Target != "xml" {
				return fmt.Errorf("document has a processing instruction <?%s?> outside the root element", t.Target)
			}
			if enc := declaredEncoding(t.Inst); enc != "" && !strings.EqualFold(enc, "utf-8") {
				return fmt.Errorf("document declares encoding %q; only UTF-8 is accepted", enc)
			}
		}
	}
	var walk func(e *etree.Element) error
	walk = func(e *etree.Element) error {
		for _, a := range e.Attr {
			if strings.ContainsAny(a.Value, "\t\r\n") {
				return fmt.Errorf("attribute %s of <%s> holds a tab or line break", a.FullKey(), e.FullTag())
			}
		}
		for _, c := range e.Child {
			if ce, ok := c.(*etree.Element); ok {
				if err := walk(ce); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(d.Root())
}

// declaredEncoding returns the encoding pseudo-attribute of an XML
// declaration's body, or "".
func declaredEncoding(inst string) string {
	i := strings.Index(inst, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(inst[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	end := strings.IndexByte(rest[1:], rest[0])
	if end < 0 {
		return ""
	}
	return rest[1 : end+1]
}

type signatureIDs struct {
	signature, signatureValue, keyInfo, object, qualifyingProperties string
	signedProperties, reference, keyInfoReference                    string
	signedPropertiesReference                                        string
}

func newSignatureIDs(id string) signatureIDs {
	return signatureIDs{
		signature:                 "Signature-" + id,
		signatureValue:            "SignatureValue-" + id,
		keyInfo:                   "KeyInfoId-Signature-" + id,
		object:                    "XadesObjectId-" + id,
		qualifyingProperties:      "QualifyingProperties-" + id,
		signedProperties:          "SignedProperties-Signature-" + id,
		reference:                 "Reference-" + id,
		keyInfoReference:          "ReferenceKeyInfo-" + id,
		signedPropertiesReference: "SignedPropertiesReference-" + id,
	}
}

func buildKeyInfo(sig *etree.Element, id string, chain []*x509.Certificate, pub *rsa.PublicKey) *etree.Element {
	keyInfo := sig.CreateElement("ds:KeyInfo")
	keyInfo.CreateAttr("Id", id)
	x509Data := keyInfo.CreateElement("ds:X509Data")
	for _, c := range chain {
		x509Data.CreateElement("ds:X509Certificate").SetText(base64.StdEncoding.EncodeToString(c.Raw))
	}
	rsaKV := keyInfo.CreateElement("ds:KeyValue").CreateElement("ds:RSAKeyValue")
	rsaKV.CreateElement("ds:Modulus").SetText(base64.StdEncoding.EncodeToString(pub.N.Bytes()))
	rsaKV.CreateElement("ds:Exponent").SetText(base64.StdEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
	return keyInfo
}

func buildQualifyingProperties(sig *etree.Element, ids signatureIDs, leaf *x509.Certificate, p Policy, at time.Time, role string) *etree.Element {
	object := sig.CreateElement("ds:Object")
	object.CreateAttr("Id", ids.object)
	qp := object.CreateElement("xades:QualifyingProperties")
	qp.CreateAttr("xmlns:xades", NamespaceXAdES)
	qp.CreateAttr("Id", ids.qualifyingProperties)
	qp.CreateAttr("Target", "#"+ids.signature)
	sp := qp.CreateElement("xades:SignedProperties")
	sp.CreateAttr("Id", ids.signedProperties)

	ssp := sp.CreateElement("xades:SignedSignatureProperties")
	ssp.CreateElement("xades:SigningTime").SetText(at.In(hacienda.CostaRica).Format("2006-01-02T15:04:05-07:00"))
	cert := ssp.CreateElement("xades:SigningCertificate").CreateElement("xades:Cert")
	certDigest := cert.CreateElement("xades:CertDigest")
	certDigest.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA256)
	sum := sha256.Sum256(leaf.Raw)
	certDigest.CreateElement("ds:DigestValue").SetText(base64.StdEncoding.EncodeToString(sum[:]))
	issuerSerial := cert.CreateElement("xades:IssuerSerial")
	issuerSerial.CreateElement("ds:X509IssuerName").SetText(leaf.Issuer.String())
	issuerSerial.CreateElement("ds:X509SerialNumber").SetText(leaf.SerialNumber.String())

	policyID := ssp.CreateElement("xades:SignaturePolicyIdentifier").CreateElement("xades:SignaturePolicyId")
	policyID.CreateElement("xades:SigPolicyId").CreateElement("xades:Identifier").SetText(p.Identifier)
	policyHash := policyID.CreateElement("xades:SigPolicyHash")
	policyHash.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", p.DigestMethod)
	policyHash.CreateElement("ds:DigestValue").SetText(p.Digest)
	if role != "" {
		ssp.CreateElement("xades:SignerRole").CreateElement("xades:ClaimedRoles").CreateElement("xades:ClaimedRole").SetText(role)
	}

	format := sp.CreateElement("xades:SignedDataObjectProperties").CreateElement("xades:DataObjectFormat")
	format.CreateAttr("ObjectReference", "#"+ids.reference)
	format.CreateElement("xades:MimeType").SetText("text/xml")
	format.CreateElement("xades:Encoding").SetText("UTF-8")
	return sp
}

func addReference(signedInfo *etree.Element, id, uri, typ string, digest []byte, transforms ...string) {
	ref := signedInfo.CreateElement("ds:Reference")
	ref.CreateAttr("Id", id)
	if typ != "" {
		ref.CreateAttr("Type", typ)
	}
	ref.CreateAttr("URI", uri)
	if len(transforms) > 0 {
		ts := ref.CreateElement("ds:Transforms")
		for _, t := range transforms {
			ts.CreateElement("ds:Transform").CreateAttr("Algorithm", t)
		}
	}
	ref.CreateElement("ds:DigestMethod").CreateAttr("Algorithm", AlgorithmSHA256)
	ref.CreateElement("ds:DigestValue").SetText(base64.StdEncoding.EncodeToString(digest))
}

// digestOf returns the SHA-256 digest of el's inclusive C14N 1.0 form.
func digestOf(el *etree.Element) ([]byte, error) {
	b, err := c14n10(el, nil)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// validID reports whether id is empty (a random one will be made) or fit
// to become part of an XML Id and a URI fragment.
func validID(id string) bool {
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

// newUUID returns a random (version 4) UUID in its textual form.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
