//go:build unix

package pipeline

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/benchcpu"
	"facturad/signer/certmint"
)

// BenchmarkAnswerVsRawRSA reads and verifies a tax-authority answer (the
// JSON of a status or a callback with its signed MensajeHacienda, checked
// against a trust bundle), as a settled document costs the service, against
// one raw RSA-2048 signature in the same loop, for answers signed in each
// of the sandbox's profiles: "hacienda", the tax authority's own
// (XAdES-BES, exclusive C14N, XPath filter), and "service", the service's
// (XAdES-EPES, inclusive C14N). "each time" parses the answer twice (its
// content, then its signature) and builds the signer's chain anew, as the
// service did before the verifier kept them; "once" is what answerProblem
// does now.
//
//	go test -run '^$' -bench AnswerVsRawRSA -cpu 1 -count 3 ./pipeline
func BenchmarkAnswerVsRawRSA(b *testing.B) {
	for _, profile := range []string{"hacienda", "service"} {
		b.Run(profile, func(b *testing.B) { benchAnswer(b, profile) })
	}
}

func benchAnswer(b *testing.B, profile string) {
	as, err := sandbox.DefaultAnswerSigner()
	if err != nil {
		b.Fatal(err)
	}
	if as.Profile, err = sandbox.ParseAnswerProfile(profile); err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(as.Root())
	clave := "506" + "010126" + "003101123456" + "00100001010000000001" + "1" + "12345678"
	unsigned, err := hacienda.MarshalMensajeHacienda(&hacienda.MensajeHacienda{
		Clave: clave, NombreEmisor: "Empresa de Pruebas S.A.", TipoIdentificacionEmisor: "02",
		NumeroCedulaEmisor: "3101123456", NombreReceptor: "Cliente", TipoIdentificacionReceptor: "01",
		NumeroCedulaReceptor: "109870654", Mensaje: hacienda.MensajeAceptado, EstadoMensaje: "Aceptado",
		DetalleMensaje:     strings.Repeat("Mensaje de prueba. ", 10),
		MontoTotalImpuesto: hacienda.AmountFromInt(3250), TotalFactura: hacienda.AmountFromInt(28251),
	})
	if err != nil {
		b.Fatal(err)
	}
	signed, err := as.SignAnswer(unsigned)
	if err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(map[string]string{"clave": clave, "fecha": "2026-01-01T10:00:00-06:00",
		"ind-estado": "aceptado", "respuesta-xml": base64.StdEncoding.EncodeToString(signed)})
	if err != nil {
		b.Fatal(err)
	}
	key := certmint.TestKey(3)

	b.Run("each time", func(b *testing.B) {
		benchcpu.CompareWithRawRSA(b, "answer", func() {
			st, err := recepcion.DecodeCallback(body)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := signer.VerifyWith(st.ResponseXML, signer.VerifyOptions{AnyPolicy: true, Roots: roots}); err != nil {
				b.Fatal(err)
			}
		}, key)
	})
	b.Run("once", func(b *testing.B) {
		cache := signer.NewVerifyCache(0)
		benchcpu.CompareWithRawRSA(b, "answer", func() {
			st, err := recepcion.DecodeCallback(body)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := signer.VerifyParsed(st.Answer, signer.VerifyOptions{AnyPolicy: true, Roots: roots, Cache: cache}); err != nil {
				b.Fatal(err)
			}
		}, key)
	})
}
