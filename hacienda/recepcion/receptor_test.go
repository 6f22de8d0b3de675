package recepcion_test

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
	"facturad/signer"
	"facturad/signer/certmint"
)

// TestReceiverMessage submits a receiver's message about an accepted
// document with consecutivoReceptor and reads its verdict under
// clave-consecutivoReceptor, with the sandbox's default checks (the
// message's signature is the receiver's).
func TestReceiverMessage(t *testing.T) {
	b := setup(t, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	clave, xml := realDoc(t, 40, nil)
	if _, err := b.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
		t.Fatal(err)
	}
	if st, err := b.client.Status(ctx, creds, clave); err != nil || st.Estado != recepcion.EstadoAceptado {
		t.Fatalf("document: %v %v", st.Estado, err)
	}

	doc, err := hacienda.ParseXML(xml)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hacienda.NewMensajeReceptor(doc, hacienda.ReceptorAnswer{Mensaje: "2", DetalleMensaje: "Crédito parcial por uso mixto",
		CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: hacienda.MustAmount("100")})
	if err != nil {
		t.Fatal(err)
	}
	m.FechaEmisionDoc = t0.Add(time.Minute)
	m.NumeroConsecutivoReceptor = "00100001060000000001"
	unsigned, err := hacienda.MarshalMensajeReceptor(m)
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "01", Identificacion: "112340567",
		Name: "CLIENTE DE PRUEBAS", Key: certmint.TestKey(2)})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := signer.Sign(unsigned, buyer.Key, []*x509.Certificate{buyer.Leaf, buyer.CA.Cert}, signer.PolicyV44)
	if err != nil {
		t.Fatal(err)
	}
	s := recepcion.Submission{
		Clave: clave, Fecha: m.FechaEmisionDoc,
		Emisor:              recepcion.Party{TipoIdentificacion: issuerTipo, NumeroIdentificacion: issuerNumero},
		Receptor:            &recepcion.Party{TipoIdentificacion: "01", NumeroIdentificacion: "112340567"},
		ConsecutivoReceptor: m.NumeroConsecutivoReceptor,
		SignedXML:           signed,
	}
	if _, err := b.client.Submit(ctx, creds, s); err != nil {
		t.Fatalf("submit the message: %v", err)
	}
	got, ok := b.sb.Document(clave + "-" + m.NumeroConsecutivoReceptor)
	if !ok || got.ConsecutivoReceptor != m.NumeroConsecutivoReceptor {
		t.Fatalf("recorded %+v %v", got, ok)
	}
	st, err := b.client.Status(ctx, creds, clave+"-"+m.NumeroConsecutivoReceptor)
	if err != nil {
		t.Fatal(err)
	}
	if st.Estado != recepcion.EstadoAceptado || st.Mensaje == nil || !st.Mensaje.Accepted() || st.Mensaje.Clave != clave {
		t.Fatalf("message: %q %+v", st.Estado, st.Mensaje)
	}
	validateMensajeXSD(t, st.ResponseXML)

	// The same receiver answering again is refused at reception.
	m.Mensaje, m.NumeroConsecutivoReceptor = hacienda.ReceptorRechazado, "00100001070000000001"
	unsigned, err = hacienda.MarshalMensajeReceptor(m)
	if err != nil {
		t.Fatal(err)
	}
	s.SignedXML, err = signer.Sign(unsigned, buyer.Key, []*x509.Certificate{buyer.Leaf, buyer.CA.Cert}, signer.PolicyV44)
	if err != nil {
		t.Fatal(err)
	}
	s.ConsecutivoReceptor = m.NumeroConsecutivoReceptor
	_, err = b.client.Submit(ctx, creds, s)
	if v := recepcion.Judge(err); err == nil || v.Kind != recepcion.Refused {
		t.Fatalf("second message: %v (%+v)", err, v)
	}
}
