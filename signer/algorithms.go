package signer

import (
	"crypto"
	_ "crypto/sha1" // digests and signatureMethods name these hashes
	_ "crypto/sha256"
	_ "crypto/sha512"
	"fmt"
	"hash"

	dsig "github.com/russellhaering/goxmldsig"
)

// The algorithms Verify accepts besides the ones Sign writes: those the
// tax authority's answers and real suppliers' signatures are seen to use
// (docs/design/signer.md, "What Verify accepts"). This table is the one
// place to widen or narrow it.
const (
	AlgorithmSHA1      = "http://www.w3.org/2000/09/xmldsig#sha1"
	AlgorithmSHA384    = "http://www.w3.org/2001/04/xmldsig-more#sha384"
	AlgorithmSHA512    = "http://www.w3.org/2001/04/xmlenc#sha512"
	AlgorithmRSASHA1   = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	AlgorithmRSASHA384 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384"
	AlgorithmRSASHA512 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"

	AlgorithmC14N10WithComments  = string(dsig.CanonicalXML10WithCommentsAlgorithmId)
	AlgorithmC14N11              = string(dsig.CanonicalXML11AlgorithmId)
	AlgorithmC14N11WithComments  = string(dsig.CanonicalXML11WithCommentsAlgorithmId)
	AlgorithmExcC14N             = string(dsig.CanonicalXML10ExclusiveAlgorithmId)
	AlgorithmExcC14NWithComments = string(dsig.CanonicalXML10ExclusiveWithCommentsAlgorithmId)
	AlgorithmXPathFilter         = "http://www.w3.org/TR/1999/REC-xpath-19991116"
	AlgorithmXPathFilter2        = "http://www.w3.org/2002/06/xmldsig-filter2"
	TypeSignedPropertiesXAdES132 = "http://uri.etsi.org/01903/v1.3.2#SignedProperties"
)

// Bounds on what one signature may ask of Verify: every reference digests
// (and may canonicalize the whole document again), so a signature made to
// be slow is refused before it costs much. Real signatures carry two to
// four references of one to three transforms, and two or three
// certificates.
const (
	maxReferences   = 16
	maxTransforms   = 8
	maxCertificates = 16
)

// digests maps the digest methods Verify accepts, for references and
// certificate digests alike, to their hash.
var digests = map[string]crypto.Hash{
	AlgorithmSHA1:   crypto.SHA1,
	AlgorithmSHA256: crypto.SHA256,
	AlgorithmSHA384: crypto.SHA384,
	AlgorithmSHA512: crypto.SHA512,
}

// signatureMethods maps the signature methods Verify accepts (all RSA
// PKCS#1 v1.5) to their hash.
var signatureMethods = map[string]crypto.Hash{
	AlgorithmRSASHA1:   crypto.SHA1,
	AlgorithmRSASHA256: crypto.SHA256,
	AlgorithmRSASHA384: crypto.SHA384,
	AlgorithmRSASHA512: crypto.SHA512,
}

// canonicalizations maps the canonicalization methods Verify accepts, for
// SignedInfo and as a reference's transform, to the one that writes the
// same node-set without its comments.
var canonicalizations = map[string]string{
	AlgorithmC14N10:              AlgorithmC14N10,
	AlgorithmC14N10WithComments:  AlgorithmC14N10,
	AlgorithmC14N11:              AlgorithmC14N11,
	AlgorithmC14N11WithComments:  AlgorithmC14N11,
	AlgorithmExcC14N:             AlgorithmExcC14N,
	AlgorithmExcC14NWithComments: AlgorithmExcC14N,
}

// newHash returns a fresh hash of a digest method Verify accepts.
func newHash(alg string) (hash.Hash, error) {
	h, ok := digests[alg]
	if !ok {
		return nil, fmt.Errorf("unsupported digest method %q", alg)
	}
	return h.New(), nil
}
