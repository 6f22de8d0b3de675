// Package signer makes and checks the enveloped XAdES-EPES signatures the
// Costa Rican tax authority requires on v4.4 electronic documents, and loads
// the PKCS#12 files that hold the signing keys.
//
// It works on bytes and keys, not on the service's domain: Sign takes a
// document, an RSA key and its certificate chain; Verify takes signed bytes.
// LoadPKCS12 opens a .p12 with its PIN; Cache keeps one parsed certificate
// per company and notices when a company uploads a new one.
//
// See docs/design/signer.md for the signature layout and the choices made.
package signer
