// Package certmint mints throwaway certificates shaped like a Costa Rican
// "llave criptográfica": a test CA and, under it, an RSA-2048 company
// certificate whose subject carries the holder's identification in
// SERIALNUMBER (CPF-…/CPJ-…), packed with its key into a .p12 protected by a
// PIN. They are for the sandbox and for tests; the tax authority will never
// accept them.
package certmint

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"facturad/hacienda"
)

// KeyBits is the RSA key size of minted keys, the size the tax authority's
// own keys have.
const KeyBits = 2048

// CA is a certificate authority that signs minted company certificates.
type CA struct {
	Cert *x509.Certificate
	Key  *rsa.PrivateKey
}

// CAOptions configures NewCA. Zero values get sandbox-like defaults.
type CAOptions struct {
	// CommonName defaults to "CA PERSONA JURIDICA - PRUEBAS".
	CommonName string
	// Organization defaults to "FACTURAD - PRUEBAS".
	Organization string
	// Key defaults to a fresh RSA-2048 key.
	Key *rsa.PrivateKey
	// NotBefore defaults to one day before now; NotAfter to ten years after
	// NotBefore.
	NotBefore, NotAfter time.Time
	// SerialNumber defaults to a random 128-bit number.
	SerialNumber *big.Int
}

// NewCA creates a self-signed test CA.
func NewCA(o CAOptions) (*CA, error) {
	if o.CommonName == "" {
		o.CommonName = "CA PERSONA JURIDICA - PRUEBAS"
	}
	if o.Organization == "" {
		o.Organization = "FACTURAD - PRUEBAS"
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-24 * time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = o.NotBefore.AddDate(10, 0, 0)
	}
	if !o.NotAfter.After(o.NotBefore) {
		return nil, errors.New("mint CA: NotAfter must be after NotBefore")
	}
	key, err := keyOrNew(o.Key)
	if err != nil {
		return nil, fmt.Errorf("mint CA: %w", err)
	}
	serial, err := serialOrNew(o.SerialNumber)
	if err != nil {
		return nil, fmt.Errorf("mint CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Country:            []string{"CR"},
			Organization:       []string{o.Organization},
			OrganizationalUnit: []string{"DGT"},
			CommonName:         o.CommonName,
		},
		NotBefore:             o.NotBefore.UTC(),
		NotAfter:              o.NotAfter.UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          keyID(&key.PublicKey),
		SignatureAlgorithm:    x509.SHA256WithRSA,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("mint CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mint CA: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// CertPEM returns the CA certificate PEM-encoded, e.g. to hand to a
// verifier as a trust anchor.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Options configures Mint.
type Options struct {
	// TipoIdentificacion is the v4.4 identification type of the holder:
	// 01 física, 02 jurídica, 03 DIMEX, 04 NITE.
	TipoIdentificacion string
	// Identificacion is the holder's identification digits, as in the
	// documents (9 digits for 01, 10 for 02 and 04, 11 or 12 for 03).
	Identificacion string
	// Name is the holder's name (subject CN).
	Name string
	// PIN protects the .p12. Empty means a fresh random 4-digit PIN, which
	// MintCertificate returns.
	PIN string
	// NotBefore defaults to one hour before now; NotAfter to two years after
	// NotBefore.
	NotBefore, NotAfter time.Time
	// Legacy encodes the .p12 with the old algorithms (RC2-40 for the
	// certificates, 3DES for the key, SHA-1 MAC) instead of AES-256 and a
	// SHA-256 MAC.
	Legacy bool
	// Iterations, when set, is the key-derivation iteration count of the
	// file's MAC and encryption (default: the encoder's, 2,048).
	Iterations int
	// CA signs the certificate; nil mints a fresh CA first.
	CA *CA
	// Key is the holder's key; nil generates a fresh RSA-2048 key. Tests
	// pass TestKey(i) to avoid the cost of key generation.
	Key *rsa.PrivateKey
	// SerialNumber defaults to a random 128-bit number.
	SerialNumber *big.Int
	// OmitChain leaves the CA certificate out of the .p12.
	OmitChain bool
}

// Minted is everything MintCertificate made.
type Minted struct {
	// P12 is the PKCS#12 file holding Key, Leaf and (unless OmitChain) the
	// CA certificate.
	P12 []byte
	// PIN opens P12.
	PIN  string
	Key  *rsa.PrivateKey
	Leaf *x509.Certificate
	CA   *CA
}

// Mint returns a .p12 holding a new company certificate and its key.
func Mint(o Options) ([]byte, error) {
	m, err := MintCertificate(o)
	if err != nil {
		return nil, err
	}
	return m.P12, nil
}

// MintCertificate is Mint returning the parts as well as the file.
func MintCertificate(o Options) (*Minted, error) {
	serialName, org, ou, err := subjectFor(o.TipoIdentificacion, o.Identificacion)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: %w", err)
	}
	if o.Name == "" {
		return nil, errors.New("mint certificate: Name is required")
	}
	if o.PIN == "" {
		if o.PIN, err = RandomPIN(); err != nil {
			return nil, fmt.Errorf("mint certificate: %w", err)
		}
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = o.NotBefore.AddDate(2, 0, 0)
	}
	if !o.NotAfter.After(o.NotBefore) {
		return nil, errors.New("mint certificate: NotAfter must be after NotBefore")
	}
	ca := o.CA
	if ca == nil {
		if ca, err = NewCA(CAOptions{NotBefore: o.NotBefore.AddDate(0, 0, -1), NotAfter: o.NotAfter.AddDate(1, 0, 0)}); err != nil {
			return nil, fmt.Errorf("mint certificate: %w", err)
		}
	}
	key, err := keyOrNew(o.Key)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: %w", err)
	}
	serial, err := serialOrNew(o.SerialNumber)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Country:            []string{"CR"},
			Organization:       []string{org},
			OrganizationalUnit: []string{ou},
			CommonName:         o.Name,
			SerialNumber:       serialName,
		},
		NotBefore:             o.NotBefore.UTC(),
		NotAfter:              o.NotAfter.UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		BasicConstraintsValid: true,
		SubjectKeyId:          keyID(&key.PublicKey),
		AuthorityKeyId:        ca.Cert.SubjectKeyId,
		SignatureAlgorithm:    x509.SHA256WithRSA,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: %w", err)
	}
	enc := pkcs12.Modern2023
	if o.Legacy {
		enc = pkcs12.LegacyRC2
	}
	if o.Iterations > 0 {
		enc = enc.WithIterations(o.Iterations)
	}
	var chain []*x509.Certificate
	if !o.OmitChain {
		chain = []*x509.Certificate{ca.Cert}
	}
	p12, err := enc.Encode(key, leaf, chain, o.PIN)
	if err != nil {
		return nil, fmt.Errorf("mint certificate: encode PKCS#12: %w", err)
	}
	return &Minted{P12: p12, PIN: o.PIN, Key: key, Leaf: leaf, CA: ca}, nil
}

// SubjectSerialNumber renders an identification the way Costa Rican
// certificates carry it in the subject SERIALNUMBER attribute:
// "CPF-0P-TTTT-AAAA" for a cédula física (01), "CPJ-T-CCC-NNNNNN" for a
// cédula jurídica (02), "DIMEX-<digits>" (03) and "NITE-<digits>" (04).
func SubjectSerialNumber(tipo, numero string) (string, error) {
	s, _, _, err := subjectFor(tipo, numero)
	return s, err
}

func subjectFor(tipo, numero string) (serialName, org, ou string, err error) {
	if !hacienda.IsNationalID(tipo) {
		return "", "", "", fmt.Errorf("identification type %q: want 01, 02, 03 or 04", tipo)
	}
	if p := (hacienda.Identificacion{Tipo: tipo, Numero: numero}).NumberProblem(); !p.IsZero() {
		return "", "", "", fmt.Errorf("identification %q: %s", numero, p)
	}
	switch tipo {
	case hacienda.IDFisica:
		return "CPF-0" + numero[:1] + "-" + numero[1:5] + "-" + numero[5:], "PERSONA FISICA", "CPF", nil
	case hacienda.IDJuridica:
		return "CPJ-" + numero[:1] + "-" + numero[1:4] + "-" + numero[4:], "PERSONA JURIDICA", "CPJ", nil
	case hacienda.IDDIMEX:
		return "DIMEX-" + numero, "PERSONA FISICA", "DIMEX", nil
	default: // hacienda.IDNITE
		return "NITE-" + numero, "PERSONA FISICA", "NITE", nil
	}
}

// RandomPIN returns a random 4-digit PIN, the form the tax authority's
// key generator uses.
func RandomPIN() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(10000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%04d", n.Int64()), nil
}

func keyOrNew(k *rsa.PrivateKey) (*rsa.PrivateKey, error) {
	if k != nil {
		if k.N.BitLen() < KeyBits {
			return nil, fmt.Errorf("key has %d bits, want at least %d", k.N.BitLen(), KeyBits)
		}
		return k, nil
	}
	return rsa.GenerateKey(rand.Reader, KeyBits)
}

func serialOrNew(s *big.Int) (*big.Int, error) {
	if s != nil {
		if s.Sign() <= 0 {
			return nil, errors.New("serial number must be positive")
		}
		return s, nil
	}
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// keyID is the RFC 5280 method-1 key identifier: SHA-1 of the public key
// bits (the modulus-and-exponent DER).
func keyID(pub *rsa.PublicKey) []byte {
	sum := sha1.Sum(x509.MarshalPKCS1PublicKey(pub))
	return sum[:]
}

// testKeys is a small pool of RSA keys generated on first use, so test
// suites that mint many certificates pay for key generation only a few
// times per process.
var testKeys struct {
	mu   sync.Mutex
	keys map[int]*rsa.PrivateKey
}

// TestKeyPoolSize is how many distinct keys TestKey hands out.
const TestKeyPoolSize = 8

// TestKey returns key number i (modulo TestKeyPoolSize) of a per-process pool
// of RSA-2048 keys generated lazily. Two calls with the same i return the
// same key. Only for tests and the sandbox: the keys live in process memory
// and are shared.
func TestKey(i int) *rsa.PrivateKey {
	i = ((i % TestKeyPoolSize) + TestKeyPoolSize) % TestKeyPoolSize
	testKeys.mu.Lock()
	defer testKeys.mu.Unlock()
	if k, ok := testKeys.keys[i]; ok {
		return k
	}
	k, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic("certmint: generate test key: " + err.Error())
	}
	if testKeys.keys == nil {
		testKeys.keys = make(map[int]*rsa.PrivateKey)
	}
	testKeys.keys[i] = k
	return k
}
