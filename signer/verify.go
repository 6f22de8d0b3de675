package signer

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"

	"facturad/hacienda"
)

// ErrInvalidSignature is wrapped by every error Verify returns for a
// document whose signature does not hold. A signature that holds but
// commits to another policy is ErrPolicyMismatch instead, and one made
// when its certificate was not valid ErrCertificateExpired; neither wraps
// ErrInvalidSignature.
var ErrInvalidSignature = errors.New("invalid signature")

// ErrPolicyMismatch means the signature commits to another signature
// policy than the expected one.
var ErrPolicyMismatch = errors.New("signature policy does not match")

// VerifyResult describes a signature that verified.
type VerifyResult struct {
	// Certificate is the signing certificate: the KeyInfo certificate whose
	// digest the signed properties carry.
	Certificate *x509.Certificate
	// Chain holds the other certificates found in KeyInfo.
	Chain []*x509.Certificate
	// SigningTime is the signed xades:SigningTime.
	SigningTime time.Time
	// SignatureID is the Id of the ds:Signature element.
	SignatureID string
	// ClaimedRole is the signed xades:ClaimedRole, if any.
	ClaimedRole string
	// Policy is the signature policy the signature commits to, or nil for
	// a signature without one (XAdES-BES).
	Policy *Policy
}

// VerifyOptions changes what Verify requires.
type VerifyOptions struct {
	// Policy is the policy the signature must commit to; the zero value
	// means PolicyV44.
	Policy Policy
	// AnyPolicy accepts a signature whatever policy it commits to, and
	// one without a policy (XAdES-BES); VerifyResult.Policy says which.
	// Trust then rests on Roots and on who the certificate names, never
	// on the policy: the tax authority signs its answers without one, and
	// suppliers' signers commit to the policies of earlier versions.
	AnyPolicy bool
	// Roots, when set, makes Verify also build a chain from the signing
	// certificate (with the KeyInfo certificates as intermediates) to one of
	// these roots, valid at the signing time.
	Roots *x509.CertPool
	// Intermediates, with Roots, are authorities a chain may pass through
	// besides the KeyInfo certificates (the national PKI's, which the tax
	// authority's answers do not carry). They are trusted only through a
	// root's signature.
	Intermediates *x509.CertPool
	// Cache, when set, keeps parsed certificates and verified chains
	// between verifications (see VerifyCache).
	Cache *VerifyCache
}

// Verify checks the enveloped XAdES signatures of a signed document
// against the v4.4 policy and returns what it found about the first one
// (the issuer's). Every ds:Signature child of the root must verify.
//
// For each signature it checks: every reference digest (and that one
// reference covers the whole document, less its signatures, and one
// covers the signature's own xades:SignedProperties); the signature value
// over SignedInfo with the signing certificate's key; that the signed
// properties name that certificate (digest and serial number) and that
// KeyInfo's key value, if any, is its key; the signature policy; and that
// the certificate was valid at the signing time. The algorithms and
// transforms it understands are those of algorithms.go and transforms.go.
func Verify(signed []byte) (*VerifyResult, error) {
	return VerifyWith(signed, VerifyOptions{})
}

// VerifyWith is Verify with options.
func VerifyWith(signed []byte, o VerifyOptions) (*VerifyResult, error) {
	p, err := Parse(signed)
	if err != nil {
		return nil, err
	}
	return VerifyParsed(p, o)
}

// Parsed is a signed document read once: its content can be read through
// Root and its signature checked by VerifyParsed, without parsing it twice.
// It is not safe for concurrent use: VerifyParsed takes the signature out
// of the tree and puts it back while it digests the document, so neither
// a second verification nor a reader of Root may run meanwhile.
type Parsed struct {
	doc *etree.Document
	raw []byte
}

// A ParseError says why Parse could not read a document (it is not XML,
// or has no root element), for a caller that reports an unreadable
// document as such rather than as an ErrInvalidSignature, which it also
// is.
type ParseError struct{ reason string }

func (e *ParseError) Error() string { return e.reason }

// Parse reads a signed document the way Verify does (a UTF-8 byte-order
// mark dropped, no permissive parsing). A document that does not parse
// is an ErrInvalidSignature, with a *ParseError saying why.
func Parse(signed []byte) (*Parsed, error) {
	signed = bytes.TrimPrefix(signed, []byte("\xef\xbb\xbf"))
	d, err := readXML(signed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSignature, &ParseError{"parse document: " + err.Error()})
	}
	if d.Root() == nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSignature, &ParseError{"document has no root element"})
	}
	// A copy: a caller changing its slice afterwards must not make Bytes
	// claim what was not parsed.
	return &Parsed{doc: d, raw: bytes.Clone(signed)}, nil
}

// Bytes are the bytes Parse read (without a byte-order mark): what a
// successful VerifyParsed vouches for.
func (p *Parsed) Bytes() []byte { return p.raw }

// Root is the document's root element, to be read, not changed: a change
// would be verified as the document.
func (p *Parsed) Root() *etree.Element { return p.doc.Root() }

// VerifyParsed is VerifyWith on a document read by Parse.
func VerifyParsed(p *Parsed, o VerifyOptions) (*VerifyResult, error) {
	if o.Policy == (Policy{}) {
		o.Policy = PolicyV44
	}
	d := p.doc
	root := d.Root()
	if err := checkDocument(d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSignature, err)
	}
	var sigs []*etree.Element
	for _, c := range root.ChildElements() {
		if c.Tag == "Signature" && c.NamespaceURI() == NamespaceDS {
			sigs = append(sigs, c)
		}
	}
	if len(sigs) == 0 {
		return nil, fmt.Errorf("%w: no ds:Signature child of the root element", ErrInvalidSignature)
	}
	ids := indexIDs(root)
	var first *VerifyResult
	for i, sig := range sigs {
		r, err := verifySignature(root, sig, ids, o)
		if err != nil {
			if len(sigs) > 1 {
				return nil, fmt.Errorf("signature %d: %w", i+1, err)
			}
			return nil, err
		}
		if first == nil {
			first = r
		}
	}
	return first, nil
}

// indexIDs maps Id attribute values to their elements. An Id used twice is
// mapped to nil, so that a reference to it fails instead of picking one.
func indexIDs(root *etree.Element) map[string]*etree.Element {
	ids := make(map[string]*etree.Element)
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		if v := e.SelectAttrValue("Id", ""); v != "" {
			if _, dup := ids[v]; dup {
				ids[v] = nil
			} else {
				ids[v] = e
			}
		}
		for _, c := range e.ChildElements() {
			walk(c)
		}
	}
	walk(root)
	return ids
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSignature}, args...)...)
}

// child returns the only child element of e in namespace ns with tag name.
func child(e *etree.Element, ns, name string) *etree.Element {
	var found *etree.Element
	for _, c := range e.ChildElements() {
		if c.Tag == name && c.NamespaceURI() == ns {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

func path(e *etree.Element, steps ...string) *etree.Element {
	for _, s := range steps {
		if e == nil {
			return nil
		}
		ns := NamespaceDS
		if p, name, ok := strings.Cut(s, ":"); ok {
			if p == "xades" {
				ns = NamespaceXAdES
			}
			s = name
		}
		e = child(e, ns, s)
	}
	return e
}

type reference struct {
	el         *etree.Element
	uri, typ   string
	transforms []*etree.Element
	digestAlg  string
	digest     []byte
}

// verification is the check of one ds:Signature. Each step reads one part
// of the signature and keeps what the later steps need.
type verification struct {
	root, sig *etree.Element
	ids       map[string]*etree.Element
	o         VerifyOptions

	sigID        string
	signedInfo   *etree.Element
	c14nAlg      string
	c14nPrefixes string
	sigHash      crypto.Hash
	signedProps  *etree.Element
	signing      *x509.Certificate
	chain        []*x509.Certificate
	pub          *rsa.PublicKey
}

// verifySignature checks one ds:Signature of the document rooted at root,
// step by step, and returns what it found.
func verifySignature(root, sig *etree.Element, ids map[string]*etree.Element, o VerifyOptions) (*VerifyResult, error) {
	v := &verification{root: root, sig: sig, ids: ids, o: o}
	if err := v.readSignedInfo(); err != nil {
		return nil, err
	}
	if err := v.findSignedProperties(); err != nil {
		return nil, err
	}
	if err := v.checkReferences(); err != nil {
		return nil, err
	}
	if err := v.findSigningCertificate(); err != nil {
		return nil, err
	}
	if err := v.checkKeyValue(); err != nil {
		return nil, err
	}
	if err := v.checkSignatureValue(); err != nil {
		return nil, err
	}
	res, err := v.readSignedProperties()
	if err != nil {
		return nil, err
	}
	if err := v.checkTrust(res.SigningTime); err != nil {
		return nil, err
	}
	return res, nil
}

// readSignedInfo finds ds:SignedInfo and reads its canonicalization and
// signature methods, refusing one that signatureMethods or
// canonicalizations do not list.
func (v *verification) readSignedInfo() error {
	v.sigID = v.sig.SelectAttrValue("Id", "")
	v.signedInfo = path(v.sig, "SignedInfo")
	if v.signedInfo == nil {
		return invalid("no ds:SignedInfo")
	}
	if cm := path(v.signedInfo, "CanonicalizationMethod"); cm != nil {
		v.c14nAlg, v.c14nPrefixes = cm.SelectAttrValue("Algorithm", ""), inclusivePrefixes(cm)
	}
	if _, ok := canonicalizations[v.c14nAlg]; !ok {
		return invalid("unsupported canonicalization method %q", v.c14nAlg)
	}
	sigAlg := ""
	if sm := path(v.signedInfo, "SignatureMethod"); sm != nil {
		sigAlg = sm.SelectAttrValue("Algorithm", "")
	}
	var ok bool
	if v.sigHash, ok = signatureMethods[sigAlg]; !ok {
		return invalid("unsupported signature method %q", sigAlg)
	}
	return nil
}

// findSignedProperties finds the signed properties of this signature: the
// xades:SignedProperties of the xades:QualifyingProperties that target it.
func (v *verification) findSignedProperties() error {
	qp := path(v.sig, "Object", "xades:QualifyingProperties")
	if qp == nil {
		for _, obj := range v.sig.ChildElements() {
			if obj.Tag == "Object" && obj.NamespaceURI() == NamespaceDS {
				if q := path(obj, "xades:QualifyingProperties"); q != nil {
					qp = q
				}
			}
		}
	}
	if qp == nil {
		return invalid("no xades:QualifyingProperties")
	}
	if v.sigID == "" || qp.SelectAttrValue("Target", "") != "#"+v.sigID {
		return invalid("QualifyingProperties Target %q does not name the signature %q", qp.SelectAttrValue("Target", ""), v.sigID)
	}
	v.signedProps = path(qp, "xades:SignedProperties")
	if v.signedProps == nil {
		return invalid("no xades:SignedProperties")
	}
	return nil
}

// readReference reads one ds:Reference of SignedInfo and its decoded
// digest.
func readReference(r *etree.Element) (reference, error) {
	ref := reference{el: r, uri: r.SelectAttrValue("URI", ""), typ: r.SelectAttrValue("Type", "")}
	if ts := path(r, "Transforms"); ts != nil {
		ref.transforms = ts.ChildElements()
	}
	if dm := path(r, "DigestMethod"); dm != nil {
		ref.digestAlg = dm.SelectAttrValue("Algorithm", "")
	}
	dv := path(r, "DigestValue")
	if dv == nil {
		return ref, invalid("reference %q has no DigestValue", ref.uri)
	}
	var err error
	if ref.digest, err = base64.StdEncoding.DecodeString(strings.TrimSpace(dv.Text())); err != nil {
		return ref, invalid("reference %q: DigestValue is not base64", ref.uri)
	}
	return ref, nil
}

// checkReferences reads every reference of SignedInfo, then recomputes
// their digests and checks that one reference covers the whole document
// through the enveloped-signature transform and one covers the signature's
// SignedProperties.
func (v *verification) checkReferences() error {
	var refs []reference
	for _, r := range v.signedInfo.ChildElements() {
		if r.Tag != "Reference" || r.NamespaceURI() != NamespaceDS {
			continue
		}
		if len(refs) == maxReferences {
			return invalid("more than %d references", maxReferences)
		}
		ref, err := readReference(r)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	var coversDocument, coversSignedProps bool
	for _, ref := range refs {
		target, err := checkReference(v.root, v.sig, v.ids, ref)
		if err != nil {
			return err
		}
		if target == v.root {
			coversDocument = true
		}
		if target == v.signedProps {
			switch ref.typ {
			case TypeSignedProperties, TypeSignedPropertiesXAdES132, "":
			default:
				return invalid("the SignedProperties reference has Type %q", ref.typ)
			}
			coversSignedProps = true
		}
	}
	if !coversDocument {
		return invalid("no reference covers the whole document, less its signature")
	}
	if !coversSignedProps {
		return invalid("no reference covers the signature's SignedProperties")
	}
	return nil
}

// findSigningCertificate reads the KeyInfo certificates and picks the one
// whose digest and serial number the signed properties carry; the others
// make up the chain.
func (v *verification) findSigningCertificate() error {
	var certs []*x509.Certificate
	if x509Data := path(v.sig, "KeyInfo", "X509Data"); x509Data != nil {
		for _, c := range x509Data.ChildElements() {
			if c.Tag != "X509Certificate" || c.NamespaceURI() != NamespaceDS {
				continue
			}
			if len(certs) == maxCertificates {
				return invalid("more than %d certificates in KeyInfo", maxCertificates)
			}
			cert, err := parseX509Certificate(c, v.o.Cache)
			if err != nil {
				return err
			}
			certs = append(certs, cert)
		}
	}
	if len(certs) == 0 {
		return invalid("no X509Certificate in KeyInfo")
	}
	// XAdES 1.3.2's SigningCertificate, or EN 319 132's SigningCertificateV2
	// (the same digest; the issuer and serial in another form, not read).
	cert := path(v.signedProps, "xades:SignedSignatureProperties", "xades:SigningCertificate", "xades:Cert")
	if cert == nil {
		cert = path(v.signedProps, "xades:SignedSignatureProperties", "xades:SigningCertificateV2", "xades:Cert")
	}
	if cert == nil {
		return invalid("no xades:SigningCertificate/Cert")
	}
	if err := v.matchCertDigest(certs, cert); err != nil {
		return err
	}
	if sn := path(cert, "xades:IssuerSerial", "X509SerialNumber"); sn != nil {
		n, ok := new(big.Int).SetString(strings.TrimSpace(sn.Text()), 10)
		if !ok || n.Cmp(v.signing.SerialNumber) != 0 {
			return invalid("signed X509SerialNumber %q is not the certificate's", sn.Text())
		}
	}
	return nil
}

// parseX509Certificate parses the certificate of one ds:X509Certificate,
// or takes it from the cache (which may be nil).
func parseX509Certificate(c *etree.Element, cache *VerifyCache) (*x509.Certificate, error) {
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Text()), ""))
	if err != nil {
		return nil, invalid("X509Certificate is not base64")
	}
	cert, err := cache.parse(der)
	if err != nil {
		return nil, invalid("X509Certificate: %v", err)
	}
	return cert, nil
}

// matchCertDigest takes as the signing certificate the first of certs
// whose digest is the one xades:Cert carries, and the others as the chain.
func (v *verification) matchCertDigest(certs []*x509.Certificate, cert *etree.Element) error {
	certDigestAlg := ""
	if dm := path(cert, "xades:CertDigest", "DigestMethod"); dm != nil {
		certDigestAlg = dm.SelectAttrValue("Algorithm", "")
	}
	certDigest, err := decodeB64(path(cert, "xades:CertDigest", "DigestValue"))
	if err != nil {
		return invalid("CertDigest: %v", err)
	}
	for _, c := range certs {
		h, err := newHash(certDigestAlg)
		if err != nil {
			return invalid("CertDigest: %v", err)
		}
		h.Write(c.Raw)
		if v.signing == nil && bytes.Equal(h.Sum(nil), certDigest) {
			v.signing = c
		} else {
			v.chain = append(v.chain, c)
		}
	}
	if v.signing == nil {
		return invalid("no KeyInfo certificate matches the signed CertDigest")
	}
	return nil
}

// checkKeyValue takes the signing certificate's RSA key and checks that
// KeyInfo's key value, if any, is that key.
func (v *verification) checkKeyValue() error {
	pub, ok := v.signing.PublicKey.(*rsa.PublicKey)
	if !ok {
		return invalid("signing certificate key is %T, not RSA", v.signing.PublicKey)
	}
	if kv := path(v.sig, "KeyInfo", "KeyValue", "RSAKeyValue"); kv != nil {
		mod, err1 := decodeB64(path(kv, "Modulus"))
		exp, err2 := decodeB64(path(kv, "Exponent"))
		if err1 != nil || err2 != nil || new(big.Int).SetBytes(mod).Cmp(pub.N) != 0 || new(big.Int).SetBytes(exp).Cmp(big.NewInt(int64(pub.E))) != 0 {
			return invalid("KeyInfo RSAKeyValue is not the signing certificate's key")
		}
	}
	v.pub = pub
	return nil
}

// checkSignatureValue verifies the signature value over the canonicalized
// SignedInfo with the signing certificate's key.
func (v *verification) checkSignatureValue() error {
	siC14N, err := canonicalize(v.c14nAlg, v.c14nPrefixes, v.signedInfo, nil)
	if err != nil {
		return invalid("canonicalize SignedInfo: %v", err)
	}
	value, err := decodeB64(path(v.sig, "SignatureValue"))
	if err != nil {
		return invalid("SignatureValue: %v", err)
	}
	h := v.sigHash.New()
	h.Write(siC14N)
	if err := rsa.VerifyPKCS1v15(v.pub, v.sigHash, h.Sum(nil), value); err != nil {
		return invalid("signature value does not verify with the signing certificate")
	}
	return nil
}

// readSignedProperties reads the signing time and the claimed role of the
// signed properties, and checks that the signature commits to the
// expected policy.
func (v *verification) readSignedProperties() (*VerifyResult, error) {
	ssp := path(v.signedProps, "xades:SignedSignatureProperties")
	res := &VerifyResult{Certificate: v.signing, Chain: v.chain, SignatureID: v.sigID}
	st := path(ssp, "xades:SigningTime")
	if st == nil {
		return nil, invalid("no xades:SigningTime")
	}
	var err error
	if res.SigningTime, err = parseSigningTime(st.Text()); err != nil {
		return nil, invalid("SigningTime %q: %v", st.Text(), err)
	}
	if role := path(ssp, "xades:SignerRole", "xades:ClaimedRoles", "xades:ClaimedRole"); role != nil {
		res.ClaimedRole = strings.TrimSpace(role.Text())
	}
	policyID := path(ssp, "xades:SignaturePolicyIdentifier", "xades:SignaturePolicyId")
	if policyID == nil {
		if v.o.AnyPolicy {
			return res, nil
		}
		return nil, fmt.Errorf("%w: no xades:SignaturePolicyId (not XAdES-EPES)", ErrPolicyMismatch)
	}
	got := Policy{}
	if id := path(policyID, "xades:SigPolicyId", "xades:Identifier"); id != nil {
		got.Identifier = strings.TrimSpace(id.Text())
	}
	if dm := path(policyID, "xades:SigPolicyHash", "DigestMethod"); dm != nil {
		got.DigestMethod = dm.SelectAttrValue("Algorithm", "")
	}
	if dv := path(policyID, "xades:SigPolicyHash", "DigestValue"); dv != nil {
		got.Digest = strings.TrimSpace(dv.Text())
	}
	res.Policy = &got
	if !v.o.AnyPolicy && got != v.o.Policy {
		return nil, fmt.Errorf("%w: got %q", ErrPolicyMismatch, got.Identifier)
	}
	return res, nil
}

// parseSigningTime reads an xsd:dateTime. A time without a zone, which
// some signers write, is read as Costa Rica time.
func parseSigningTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t, nil
	}
	if t, err2 := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, hacienda.CostaRica); err2 == nil {
		return t, nil
	}
	return time.Time{}, err
}

// checkTrust checks that the signing certificate was valid at the signing
// time and, when the options give roots, that it chains to one of them.
func (v *verification) checkTrust(signingTime time.Time) error {
	if err := checkValidity(v.signing, signingTime); err != nil {
		return fmt.Errorf("signing certificate at signing time: %w", err)
	}
	if v.o.Roots == nil {
		return nil
	}
	var k chainKey
	if v.o.Cache != nil {
		k = v.o.Cache.key(v.o.Roots, v.o.Intermediates, v.signing, v.chain)
		if v.o.Cache.trusted(k, signingTime) {
			return nil
		}
	}
	chain, err := buildChain(v.signing, v.chain, v.o.Roots, v.o.Intermediates, signingTime)
	if err != nil {
		return err
	}
	v.o.Cache.remember(k, chain)
	return nil
}

// buildChain builds a chain from signing to one of roots at t, through
// the KeyInfo certificates keyInfo and the pool intermediates (nil for
// none).
func buildChain(signing *x509.Certificate, keyInfo []*x509.Certificate, roots, intermediates *x509.CertPool, t time.Time) ([]*x509.Certificate, error) {
	inter := x509.NewCertPool()
	if intermediates != nil {
		inter = intermediates.Clone()
	}
	for _, c := range keyInfo {
		inter.AddCert(c)
	}
	chains, err := signing.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inter, CurrentTime: t,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return nil, invalid("signing certificate is not trusted: %v", err)
	}
	return chains[0], nil
}

// checkReference recomputes one reference's digest and returns the
// element it covers. A reference to the element that holds its own
// signature must leave that signature out (the enveloped-signature
// transform, or an XPath filter that does as much); one to any other
// element must not contain it.
func checkReference(root, sig *etree.Element, ids map[string]*etree.Element, ref reference) (*etree.Element, error) {
	var target *etree.Element
	switch {
	case ref.uri == "":
		target = root
	case strings.HasPrefix(ref.uri, "#"):
		t, ok := ids[ref.uri[1:]]
		if !ok {
			return nil, invalid("reference %q: no element with that Id", ref.uri)
		}
		if t == nil {
			return nil, invalid("reference %q: the Id is used more than once", ref.uri)
		}
		target = t
	default:
		return nil, invalid("reference %q: only same-document references are supported", ref.uri)
	}
	plan, err := readTransforms(ref.transforms)
	if err != nil {
		return nil, fmt.Errorf("reference %q: %w", ref.uri, err)
	}
	// A same-document reference ("" or "#id") selects its nodes without
	// the comments (XMLDSig §4.3.3.3), so a canonicalization with comments
	// finds none to write.
	plan.c14nAlg = canonicalizations[plan.c14nAlg]
	if ref.uri == "" && plan.exclude == excludeNone {
		return nil, invalid("the document reference does not leave out its signature")
	}
	contains := isAncestor(target, sig)
	if plan.exclude != excludeNone && !contains {
		return nil, invalid("reference %q: leaves out a signature from an element that does not contain it", ref.uri)
	}
	if plan.exclude == excludeNone && contains {
		return nil, invalid("reference %q covers its own signature", ref.uri)
	}
	h, err := newHash(ref.digestAlg)
	if err != nil {
		return nil, invalid("reference %q: %v", ref.uri, err)
	}
	var skip []*etree.Element
	switch plan.exclude {
	case excludeOwn:
		skip = []*etree.Element{sig}
	case excludeAll:
		skip = signaturesUnder(target)
		// Signatures sit on the root; one anywhere else would be left out
		// of the digest unseen, a place to hide content in.
		for _, e := range skip {
			if e.Parent() != root {
				return nil, invalid("reference %q: a ds:Signature inside <%s> would be left out of what it covers", ref.uri, e.Parent().FullTag())
			}
		}
	}
	out, err := canonicalize(plan.c14nAlg, plan.prefixes, target, skip)
	if err != nil {
		return nil, invalid("reference %q: canonicalize: %v", ref.uri, err)
	}
	h.Write(out)
	if !bytes.Equal(h.Sum(nil), ref.digest) {
		return nil, invalid("reference %q: digest mismatch", ref.uri)
	}
	return target, nil
}

// signaturesUnder returns every ds:Signature element below el, outermost
// first; a signature inside another is left out with it.
func signaturesUnder(el *etree.Element) []*etree.Element {
	var found []*etree.Element
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		for _, c := range e.ChildElements() {
			if c.Tag == "Signature" && c.NamespaceURI() == NamespaceDS {
				found = append(found, c)
				continue
			}
			walk(c)
		}
	}
	walk(el)
	return found
}

func isAncestor(a, e *etree.Element) bool {
	for p := e.Parent(); p != nil; p = p.Parent() {
		if p == a {
			return true
		}
	}
	return false
}

// canonicalize runs the named canonicalization on el in its place in the
// document, leaving out the elements of skip (the signatures a reference
// leaves out). Inclusive C14N 1.0 and exclusive C14N without a prefix
// list take the in-scope namespaces from el's ancestors themselves (the
// direct writer of c14n.go); the other methods get a detached copy
// carrying them.
func canonicalize(alg, prefixes string, el *etree.Element, skip []*etree.Element) ([]byte, error) {
	if len(skip) <= 1 && (alg == AlgorithmC14N10 || alg == AlgorithmExcC14N && prefixes == "") {
		var one *etree.Element
		if len(skip) == 1 {
			one = skip[0]
		}
		return directC14N(el, one, alg == AlgorithmExcC14N)
	}
	for _, e := range skip {
		defer detach(e)()
	}
	if alg == AlgorithmC14N10 {
		return c14n10(el, nil)
	}
	switch alg {
	case string(dsig.CanonicalXML10WithCommentsAlgorithmId):
		return dsig.MakeC14N10WithCommentsCanonicalizer().Canonicalize(el)
	}
	detached, err := detachedCopy(el)
	if err != nil {
		return nil, err
	}
	switch alg {
	case string(dsig.CanonicalXML10ExclusiveAlgorithmId):
		return dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList(prefixes).Canonicalize(detached)
	case string(dsig.CanonicalXML10ExclusiveWithCommentsAlgorithmId):
		return dsig.MakeC14N10ExclusiveWithCommentsCanonicalizerWithPrefixList(prefixes).Canonicalize(detached)
	case string(dsig.CanonicalXML11AlgorithmId):
		return dsig.MakeC14N11Canonicalizer().Canonicalize(detached)
	case string(dsig.CanonicalXML11WithCommentsAlgorithmId):
		return dsig.MakeC14N11WithCommentsCanonicalizer().Canonicalize(detached)
	}
	return nil, fmt.Errorf("unsupported canonicalization method %q", alg)
}

func decodeB64(e *etree.Element) ([]byte, error) {
	if e == nil {
		return nil, errors.New("missing")
	}
	return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(e.Text()), ""))
}

// ChainTo checks that the signing certificate chains to one of roots,
// through the KeyInfo certificates and intermediates, at the signing time:
// the check VerifyOptions.Roots makes, for a caller that decides what an
// untrusted chain means only after it knows whose signature holds.
func (r *VerifyResult) ChainTo(roots, intermediates *x509.CertPool) error {
	_, err := buildChain(r.Certificate, r.Chain, roots, intermediates, r.SigningTime)
	return err
}
