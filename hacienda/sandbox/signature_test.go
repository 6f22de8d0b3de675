package sandbox_test

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"

	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
)

// TestSignatureCheck rejects a document signed with another taxpayer's
// certificate, or (with trusted authorities) one certified by an authority
// not among them, in the tax authority's words.
func TestSignatureCheck(t *testing.T) {
	trustedCA, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(11)})
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(12), CommonName: "OTRA CA"})
	if err != nil {
		t.Fatal(err)
	}
	mint := func(ca *certmint.CA, tipo, id string, key int) *certmint.Minted {
		m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: tipo, Identificacion: id, Name: "Titular " + id, CA: ca, Key: certmint.TestKey(key)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	company := mint(trustedCA, "02", issuerNumero, 13)
	stranger := mint(trustedCA, "02", "3101999999", 14)
	elsewhere := mint(otherCA, "02", issuerNumero, 15)
	buyer := [2]string{"01", "112340567"}
	clave, cons := claveFor(900, "01")
	factura := partyDoc("FacturaElectronica", clave, cons, [2]string{issuerTipo, issuerNumero}, buyer)
	fecClave, fecCons := claveFor(901, "08")
	compra := partyDoc("FacturaElectronicaCompra", fecClave, fecCons, [2]string{"01", "205550666"}, [2]string{issuerTipo, issuerNumero})
	roots := x509.NewCertPool()
	roots.AddCert(trustedCA.Cert)

	for _, tc := range []struct {
		name  string
		doc   []byte
		by    *certmint.Minted
		roots *x509.CertPool
		want  string // part of the finding; empty: none
	}{
		{"ok/the issuer's certificate", factura, company, nil, ""},
		{"ok/trusted authority", factura, company, roots, ""},
		{"ok/purchase signed by the buyer", compra, company, roots, ""},
		{"error/another taxpayer's certificate", factura, stranger, nil, "El contribuyente que firma la factura electronica no es el emisor"},
		{"error/purchase signed by another", compra, stranger, nil, "no es el emisor"},
		{"error/untrusted authority", factura, elsewhere, roots, "La firma del comprobante electrónico no es válida"},
		{"ok/any authority without roots", factura, elsewhere, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signed, err := signer.Sign(tc.doc, tc.by.Key, []*x509.Certificate{tc.by.Leaf, tc.by.CA.Cert}, signer.PolicyV44)
			if err != nil {
				t.Fatal(err)
			}
			got := sandbox.SignatureCheck{Roots: tc.roots}.Check(context.Background(), signed)
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("findings %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("findings %q, want one containing %q", got, tc.want)
			}
		})
	}
}
