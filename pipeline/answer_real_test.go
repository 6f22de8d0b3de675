package pipeline

import (
	"bytes"
	"os"
	"testing"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/trust"
)

// TestRealAnswerIsApplied gives the tax authority's real 2023 answer
// (signer/testdata/real, signed in its own XAdES-BES profile by the
// Ministerio de Hacienda's seal, since expired) to the checks every
// verdict passes, with the trust the service has in staging and
// production: the national PKI and the Ministry's identification. The
// answer accepts the document (Mensaje 1) with a note (-48) in its
// DetalleMensaje. It is applied; a one-byte change of it, or the same answer told about another
// document or issuer, is not.
func TestRealAnswerIsApplied(t *testing.T) {
	t.Parallel()
	answer, err := os.ReadFile("../signer/testdata/real/hacienda-answer-2023.xml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := trust.NationalPKI()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pipeline{o: Options{AnswerRoots: n.Roots, AnswerIntermediates: n.Intermediates, AnswerSigner: trust.MinistryIdentification}}
	const clave = "50627012300060453034000100001010000000001190483050"
	doc := func() subject { return subject{key: clave, clave: clave, issuer: "604530340"} }
	status := func(b []byte) *recepcion.Status {
		return &recepcion.Status{Clave: clave, Estado: recepcion.EstadoAceptado, ResponseXML: b}
	}
	if reason, err := p.answerProblem(doc(), status(answer)); err != nil {
		t.Fatalf("the real answer is not applied (%s): %v", reason, err)
	}
	changed := bytes.Replace(answer, []byte("<MontoTotalImpuesto>130"), []byte("<MontoTotalImpuesto>131"), 1)
	for _, tt := range []struct {
		name   string
		d      subject
		st     *recepcion.Status
		reason string
	}{
		{"one byte changed", doc(), status(changed), "signature"},
		{"another issuer", subject{key: clave, clave: clave, issuer: "3101123456"}, status(answer), "issuer"},
		{"another verdict", doc(), &recepcion.Status{Clave: clave, Estado: recepcion.EstadoRechazado, ResponseXML: answer}, "verdict"},
	} {
		if reason, err := p.answerProblem(tt.d, tt.st); reason != tt.reason || err == nil {
			t.Errorf("%s: reason %q (%v), want %q", tt.name, reason, err, tt.reason)
		}
	}
	other := &Pipeline{o: Options{AnswerRoots: n.Roots, AnswerIntermediates: n.Intermediates, AnswerSigner: "3101123456"}}
	if reason, _ := other.answerProblem(doc(), status(answer)); reason != "signer" {
		t.Errorf("expecting another signer: reason %q, want signer", reason)
	}
}
