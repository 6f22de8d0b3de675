package signer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"facturad/hacienda/trust"
)

// The documents in testdata/real were signed by others (SOURCES.md there
// names each one's repository and commit): the tax authority's answer and
// suppliers' documents as their own software signed them. They are what
// Verify must accept; the service's own signer never made them.

const (
	realAnswer = "testdata/real/hacienda-answer-2023.xml"
	// realSupplierV43 is a supplier's document signed under the v4.3
	// policy, as its signer spells it.
	realSupplierV43 = "testdata/real/suppliers/firmador-php-factura-v43-2023-sandbox.xml"
)

// realPolicy is the policy the real document name commits to.
func realPolicy(t *testing.T, name string) Policy {
	t.Helper()
	res, err := VerifyWith(readReal(t, name), VerifyOptions{AnyPolicy: true})
	if err != nil || res.Policy == nil {
		t.Fatalf("%s: no policy read (%v)", name, err)
	}
	return *res.Policy
}

func readReal(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nationalOptions verifies as the service verifies the tax authority's
// answers in staging and production: any policy, chained to the national
// PKI.
func nationalOptions(t *testing.T) VerifyOptions {
	t.Helper()
	n, err := trust.NationalPKI()
	if err != nil {
		t.Fatal(err)
	}
	return VerifyOptions{AnyPolicy: true, Roots: n.Roots, Intermediates: n.Intermediates}
}

// TestRealAnswerVerifies checks the tax authority's real 2023 answer: its
// signature (the EU DSS library's XAdES-BES profile) holds, its signer is
// the Ministerio de Hacienda, and its certificate chains to the national
// root at the signing time, although it has expired since.
func TestRealAnswerVerifies(t *testing.T) {
	t.Parallel()
	res, err := VerifyWith(readReal(t, realAnswer), nationalOptions(t))
	if err != nil {
		t.Fatalf("the tax authority's real answer: %v", err)
	}
	if want := time.Date(2023, 1, 27, 19, 16, 21, 0, time.UTC); !res.SigningTime.Equal(want) {
		t.Errorf("SigningTime %s, want %s", res.SigningTime, want)
	}
	if res.Policy != nil {
		t.Errorf("Policy %+v, want none (XAdES-BES)", *res.Policy)
	}
	id, err := CertificateIdentification(res.Certificate)
	if err != nil || id.Numero != trust.MinistryIdentification {
		t.Errorf("signer identification %+v (%v), want the Ministry's %s", id, err, trust.MinistryIdentification)
	}
	// The point of the signing time: the certificate has expired since.
	if expired := time.Date(2026, 5, 12, 0, 0, 0, 0, time.UTC); !res.Certificate.NotAfter.Before(expired) {
		t.Errorf("the answer's certificate is valid until %s, want it expired before %s", res.Certificate.NotAfter, expired)
	}
}

// TestRealAnswerRefusals changes one byte of the real answer in each part
// that matters, and checks the trust that the answer rests on: without the
// national PKI, or by the policy rule the service's own documents follow,
// it is refused.
func TestRealAnswerRefusals(t *testing.T) {
	t.Parallel()
	answer := readReal(t, realAnswer)
	oneByte := func(after, old, new string) []byte {
		if len(old) != 1 || len(new) != 1 {
			t.Fatal("a one-byte change")
		}
		return replaceOnce(t, answer, after, old, new)
	}
	for _, tt := range []struct {
		name    string
		doc     []byte
		opts    func(VerifyOptions) VerifyOptions
		wantErr error
	}{
		{name: "a digit of the clave", doc: oneByte("<Clave>", "5", "6")},
		{name: "the verdict", doc: oneByte("<Mensaje>", "1", "3")},
		{name: "a digit of the tax total", doc: oneByte("<MontoTotalImpuesto>", "1", "2")},
		{name: "the signing time", doc: oneByte("<xades:SigningTime>", "2", "3")},
		{name: "the signature value", doc: oneByte("<ds:SignatureValue", "A", "B")},
		{name: "the certificate", doc: oneByte("<ds:X509Certificate>", "M", "N")},
		{name: "the document reference's XPath", doc: oneByte("<ds:XPath>", "S", "T")},
		{name: "not trusted without the national PKI", doc: answer, opts: func(o VerifyOptions) VerifyOptions {
			o.Intermediates = nil
			return o
		}},
		{name: "refused by the rule for the service's own documents", doc: answer, opts: func(VerifyOptions) VerifyOptions {
			return VerifyOptions{}
		}, wantErr: ErrPolicyMismatch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := nationalOptions(t)
			if tt.opts != nil {
				o = tt.opts(o)
			}
			_, err := VerifyWith(tt.doc, o)
			want := tt.wantErr
			if want == nil {
				want = ErrInvalidSignature
			}
			if !errors.Is(err, want) {
				t.Errorf("err = %v, want %v", err, want)
			}
		})
	}
}

// TestRealSupplierDocumentsVerify checks the suppliers' documents of
// testdata/real/suppliers, signed by four producers' software with the
// policies of earlier versions: each verifies with any policy, records
// its policy, and is signed by a certificate of its Emisor. A one-byte
// change of each is refused.
func TestRealSupplierDocumentsVerify(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/real/suppliers/*.xml")
	if err != nil || len(files) < 3 {
		t.Fatalf("%d supplier documents (%v), want at least 3", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			doc := readReal(t, f)
			res, err := VerifyWith(doc, VerifyOptions{AnyPolicy: true})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if res.Policy == nil || res.Policy.Identifier == "" {
				t.Errorf("Policy %+v, want the one the supplier's signer committed to", res.Policy)
			}
			if _, err := Verify(doc); !errors.Is(err, ErrPolicyMismatch) {
				t.Errorf("with the v4.4 policy required: err = %v, want ErrPolicyMismatch", err)
			}
			id, err := CertificateIdentification(res.Certificate)
			if err != nil {
				t.Fatalf("no identification in the signing certificate: %v", err)
			}
			emisor := elementText(t, doc, "Emisor/Identificacion", "Numero")
			if id.Numero != emisor {
				t.Errorf("signed by %s, the document's Emisor is %s", id.Numero, emisor)
			}
			i := bytes.Index(doc, []byte("<Clave>"))
			if i < 0 {
				t.Fatal("no <Clave>")
			}
			tampered := bytes.Clone(doc)
			tampered[i+len("<Clave>")] ^= 1 // a digit becomes another
			if _, err := VerifyWith(tampered, VerifyOptions{AnyPolicy: true}); !errors.Is(err, ErrInvalidSignature) {
				t.Errorf("a changed clave: err = %v, want ErrInvalidSignature", err)
			}
		})
	}
}

// elementText returns the text of the first child named child of the first
// element named parent, whatever their namespace.
func elementText(t *testing.T, doc []byte, parent, child string) string {
	t.Helper()
	p, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Root().FindElement(".//" + parent + "/" + child)
	if e == nil {
		t.Fatalf("no %s/%s", parent, child)
	}
	return e.Text()
}
