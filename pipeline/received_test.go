package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/xmlcheck"
	"facturad/signer"
	"facturad/tenant"
)

// The receiver's side: company B (the harness's company) issues documents
// to company A, and A answers them.

const buyerID = "3101654321"

// issueTo sends an FE of the harness's company to the company with that
// identification, waits for the tax authority to accept it and returns
// its signed XML.
func (b *bundle) issueTo(t *testing.T, id, idExterno string) []byte {
	t.Helper()
	r := request("01", idExterno)
	r["receptor"] = map[string]any{"nombre": "Compradora S.A.", "identificacion": map[string]any{"tipo": "02", "numero": id}}
	out := b.mustSend(t, r)
	if out.Failed {
		t.Fatalf("send: %s", describe(out))
	}
	b.waitAccepted(t, func(ctx context.Context) (tenant.State, error) {
		o, err := b.p.Check(ctx, b.branch, out.Document.Clave)
		return o.Document.Estado, err
	})
	return b.stored(t, out.Document.Clave).SignedXML
}

// waitAccepted asks until the answer is 01, for at most 10 s.
func (b *bundle) waitAccepted(t *testing.T, ask func(context.Context) (tenant.State, error)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := ask(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st == tenant.StateAccepted {
			return
		}
		if st == tenant.StateRejected || st == tenant.StateError || time.Now().After(deadline) {
			t.Fatalf("estado %s, want 01", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func receiveJSON(xml []byte, mensaje, idExterno string, extra map[string]any) []byte {
	m := map[string]any{"xml": base64.StdEncoding.EncodeToString(xml), "mensaje": mensaje, "id_externo": idExterno}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func (b *bundle) receive(pr tenant.Principal, raw []byte) (ReceivedOutcome, error) {
	req, err := hacienda.DecodeReceiveRequest(raw)
	if err != nil {
		return ReceivedOutcome{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return b.p.Receive(ctx, pr, req)
}

// requireField fails unless err is a validation error on field whose
// message contains want.
func requireField(t *testing.T, err error, field, want string) {
	t.Helper()
	var fe interface{ FieldErrors() map[string][]string }
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a validation error on %s", err, field)
	}
	msgs := fe.FieldErrors()[field]
	if len(msgs) == 0 || !strings.Contains(strings.Join(msgs, " "), want) {
		t.Fatalf("errors %v, want %q on %s", fe.FieldErrors(), want, field)
	}
}

func TestReceive(t *testing.T) {
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) { testReceive(t, sk.open) })
	}
}

func testReceive(t *testing.T, open func(testing.TB) fullStore) {
	b := setup(t, setupOptions{store: open})
	_, buyer := b.newCompany(t, buyerID)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, harnessCA().CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}

	answers := []struct {
		mensaje, tipo string
		extra         map[string]any
	}{
		{"1", "05", map[string]any{"condicionImpuesto": "01", "montoTotalImpuestoAcreditar": "3250.13"}},
		{"2", "06", map[string]any{"detalleMensaje": "Solo parte del servicio fue prestado", "condicionImpuesto": "02", "montoTotalImpuestoAcreditar": 1000}},
		{"3", "07", map[string]any{"detalleMensaje": "El servicio no fue contratado"}},
	}
	for i, a := range answers {
		xml := b.issueTo(t, buyerID, "fe-"+a.mensaje)
		id := "rcv-" + a.mensaje
		out, err := b.receive(buyer, receiveJSON(xml, a.mensaje, id, a.extra))
		if err != nil {
			t.Fatalf("mensaje %s: %v", a.mensaje, err)
		}
		r := out.Received
		if out.Failed || (r.Estado != tenant.StateSent && r.Estado != tenant.StateAccepted) {
			t.Fatalf("mensaje %s: %+v %s", a.mensaje, out, r.LastError)
		}
		// Each type has its own sequence: every message is the first of it.
		if want := "0010000" + "1" + a.tipo + "0000000001"; r.Consecutivo != want || r.Tipo != a.tipo || r.Numero != 1 {
			t.Errorf("mensaje %s: consecutivo %s tipo %s numero %d, want %s", a.mensaje, r.Consecutivo, r.Tipo, r.Numero, want)
		}
		if r.EmisorNumero != "3101123456" || r.ReceptorNumero != buyerID || r.Mensaje != a.mensaje || r.TotalComprobante == "" {
			t.Errorf("mensaje %s: stored %+v", a.mensaje, r)
		}
		if !bytes.Equal(r.SupplierXML, xml) {
			t.Errorf("mensaje %s: the supplier's XML is not stored as uploaded", a.mensaje)
		}
		if err := xmlcheck.XSD(t, "MensajeReceptor", r.SignedXML); err != nil {
			t.Errorf("mensaje %s: XSD: %v", a.mensaje, err)
		}
		if _, err := signer.Verify(r.SignedXML); err != nil {
			t.Errorf("mensaje %s: verify: %v", a.mensaje, err)
		}
		if err := xmlcheck.XMLSec(t, r.SignedXML, ca); err != nil {
			t.Errorf("mensaje %s: xmlsec1: %v", a.mensaje, err)
		}
		m, err := hacienda.ParseMensajeReceptor(r.SignedXML)
		if err != nil || m.Clave != r.Clave || m.NumeroConsecutivoReceptor != r.Consecutivo || m.Mensaje != i+1 || m.NumeroCedulaReceptor != buyerID {
			t.Errorf("mensaje %s: message %+v %v", a.mensaje, m, err)
		}

		// The tax authority accepts the message (01) with a signed answer.
		var last ReceivedOutcome
		b.waitAccepted(t, func(ctx context.Context) (tenant.State, error) {
			o, err := b.p.CheckReceived(ctx, buyer, r.Clave)
			last = o
			return o.Received.Estado, err
		})
		if last.Failed || last.Received.CodigoMensaje != "1" || len(last.Received.ResponseXML) == 0 {
			t.Errorf("mensaje %s: check %+v", a.mensaje, last)
		}
		if err := xmlcheck.XSD(t, "MensajeHacienda", last.Received.ResponseXML); err != nil {
			t.Errorf("mensaje %s: answer XSD: %v", a.mensaje, err)
		}
		got, err := b.p.Received(context.Background(), buyer, r.Clave)
		if err != nil || got.Estado != tenant.StateAccepted {
			t.Errorf("mensaje %s: read %v %v", a.mensaje, got.Estado, err)
		}

		// The same request again replays; the id_externo with another body
		// is refused.
		again, err := b.receive(buyer, receiveJSON(xml, a.mensaje, id, a.extra))
		if err != nil || again.Received.ID != r.ID || again.Estado != tenant.StateAccepted {
			t.Errorf("mensaje %s: repeat %+v %v", a.mensaje, again, err)
		}
		_, err = b.receive(buyer, receiveJSON(xml, a.mensaje, id, map[string]any{"detalleMensaje": "Otro detalle distinto"}))
		requireField(t, err, "id_externo", "already used")
		// A second answer to the same document under a new id_externo.
		_, err = b.receive(buyer, receiveJSON(xml, "3", "otra-"+a.mensaje, map[string]any{"detalleMensaje": "Cambio de opinión"}))
		requireField(t, err, "xml", "already answered")
	}

	// Nothing numbered by the refusals: the next acceptance is 05 number 2.
	xml := b.issueTo(t, buyerID, "fe-4")
	out, err := b.receive(buyer, receiveJSON(xml, "1", "", nil))
	if err != nil || out.Received.Numero != 2 || out.Received.Tipo != "05" {
		t.Fatalf("fourth: %+v %v", out, err)
	}
	// A branch user of another company does not see it.
	if _, err := b.p.Received(context.Background(), b.branch, out.Received.Clave); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("another company reads it: %v", err)
	}
	if _, err := b.p.CheckReceived(context.Background(), b.branch, out.Received.Clave); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("another company checks it: %v", err)
	}
}

func TestReceiveRefusals(t *testing.T) {
	b := setup(t, setupOptions{})
	_, buyer := b.newCompany(t, buyerID)
	xml := b.issueTo(t, buyerID, "fe-1")

	// Tampered: a total changed after signing.
	tampered := bytes.Replace(xml, []byte("<TotalComprobante>"), []byte("<TotalComprobante>1"), 1)
	if bytes.Equal(tampered, xml) {
		t.Fatal("nothing tampered")
	}
	_, err := b.receive(buyer, receiveJSON(tampered, "1", "t1", nil))
	requireField(t, err, "xml", "signature does not verify")

	// Addressed to another company: the issuer itself uploads it.
	_, err = b.receive(b.branch, receiveJSON(xml, "1", "t2", nil))
	requireField(t, err, "xml", "addressed to "+buyerID)

	// A tiquete is not answerable.
	te := b.mustSend(t, request("04", "te-1"))
	_, err = b.receive(buyer, receiveJSON(b.stored(t, te.Document.Clave).SignedXML, "1", "t3", nil))
	requireField(t, err, "xml", "Tiquete")

	// A document the tax authority never received: signed by its issuer,
	// never submitted.
	doc, err := hacienda.ParseXML(xml)
	if err != nil {
		t.Fatal(err)
	}
	unknown := []byte(strings.Replace(string(xml), doc.Clave, doc.Clave[:42]+"99999999", -1))
	unsigned := unknown[:bytes.Index(unknown, []byte("<ds:Signature"))]
	unsigned = append(unsigned, []byte("</FacturaElectronica>")...)
	signedUnknown, err := b.cache.Sign(context.Background(), b.company.ID, unsigned)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.receive(buyer, receiveJSON(signedUnknown, "1", "t4", nil))
	requireField(t, err, "xml", "does not know this document")

	// The answer's own rules, on their fields.
	_, err = b.receive(buyer, receiveJSON(xml, "3", "t5", map[string]any{"montoTotalImpuestoAcreditar": 5}))
	requireField(t, err, "detalleMensaje", "required")
	requireField(t, err, "montoTotalImpuestoAcreditar", "rejected")
	_, err = b.receive(buyer, receiveJSON(xml, "7", "t6", nil))
	requireField(t, err, "mensaje", "must be 1")
	_, err = b.receive(buyer, []byte(`{"xml":"not base64!","mensaje":1}`))
	requireField(t, err, "xml", "base64")
	_, err = b.receive(buyer, []byte(`{"mensaje":1}`))
	requireField(t, err, "xml", "required")

	// Admins and resellers do not receive.
	if _, err := b.p.Receive(context.Background(), b.admin, &hacienda.ReceiveRequest{XML: xml}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("admin: %v", err)
	}
	// None of it took a number.
	out, err := b.receive(buyer, receiveJSON(xml, "1", "ok", nil))
	if err != nil || out.Received.Numero != 1 {
		t.Fatalf("after the refusals: %+v %v", out, err)
	}
}
