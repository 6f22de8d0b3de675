package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda/xmlcheck"
	"facturad/signer/certmint"
)

// receiveEveryAnswer runs the receiver's side (A.11) against a running
// service: company B issues three FEs to company A through the service,
// A answers them with mensaje 1, 2 and 3 through the Go client, and each
// message must be schema-valid, signed (xmlsec1), accepted by the tax
// authority and readable; a tampered supplier XML, one addressed to
// another company and a second answer are refused with 400s on xml.
func receiveEveryAnswer(t *testing.T, api string) {
	admin := apiClient{t: t, base: "http://" + api, token: e2eAdminToken, user: e2eAdminUser, pass: e2eAdminPass}
	ca, err := certmint.NewCA(certmint.CAOptions{Key: certmint.TestKey(1)})
	if err != nil {
		t.Fatal(err)
	}
	caPEM := caFile(t, ca)
	const supplierID, buyerID = "3101777001", "3101777002"
	supplier := createCompany(t, admin, ca, supplierID)
	buyerAPI := createCompany(t, admin, ca, buyerID)
	stranger := createCompany(t, admin, ca, "3101777003")
	as := func(c apiClient) *client.Client {
		// The Go client's calls are held to the OpenAPI document too.
		cl, err := client.New(c.base, client.WithCredentials(c.user, c.pass, c.token), client.WithHTTPClient(checkedHTTP(t)))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	buyer, other := as(buyerAPI), as(stranger)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// issue sends an FE of the supplier to the buyer, waits for the tax
	// authority's acceptance and returns its signed XML.
	issue := func(t *testing.T, id string) []byte {
		t.Helper()
		body := []byte(`{"id_externo":"` + id + `","tipo_documento":"01","condicion_venta":"01",
		  "receptor":{"nombre":"Compradora S.A.","identificacion":{"tipo":"02","numero":"` + buyerID + `"},"correoElectronico":"compras@example.com"},
		  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Servicio de consultoría",
		    "precioUnitario":12500.5,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
		  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
		supplier.t = t
		var sent document
		supplier.json("POST", "/api/documents/v4", body, 200, &sent)
		checked := supplier.checkUntilVerdict(sent.Clave, "")
		if checked.Estado != "01" {
			t.Fatalf("the supplier's FE: %+v", checked)
		}
		status, xml := supplier.do("GET", "/api/documents/"+sent.Clave+"/xml/v4", "", nil)
		if status != 200 {
			t.Fatalf("the supplier's XML: %d", status)
		}
		return xml
	}
	refused := func(t *testing.T, err error, field string) {
		t.Helper()
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || len(ae.Fields[field]) == 0 {
			t.Fatalf("got %v, want a 400 on %s", err, field)
		}
	}

	answers := []struct {
		req  client.ReceiveRequest
		tipo string
	}{
		{client.ReceiveRequest{Mensaje: client.MensajeAceptado, CondicionImpuesto: "01", MontoTotalImpuestoAcreditar: "3250.13"}, "05"},
		{client.ReceiveRequest{Mensaje: client.MensajeParcial, DetalleMensaje: "Solo una parte del servicio fue prestada",
			CondicionImpuesto: "02", MontoTotalImpuestoAcreditar: "1000"}, "06"},
		{client.ReceiveRequest{Mensaje: client.MensajeRechazado, DetalleMensaje: "El servicio no fue contratado"}, "07"},
	}
	var first []byte
	for _, a := range answers {
		t.Run("mensaje"+a.req.Mensaje, func(t *testing.T) {
			xml := issue(t, "fe-para-"+a.req.Mensaje)
			if first == nil {
				first = xml
			}
			req := a.req
			req.XML, req.IDExterno = xml, "respuesta-"+a.req.Mensaje
			got, err := buyer.Receive(ctx, &req)
			if err != nil {
				t.Fatalf("receive: %v", err)
			}
			if got.Estado != client.EstadoSent || got.Mensaje != a.req.Mensaje || got.ConsecutivoReceptor[8:10] != a.tipo ||
				got.Emisor.NumeroIdentificacion != supplierID || got.Receptor.NumeroIdentificacion != buyerID || got.TotalFactura != "28251.13" {
				t.Fatalf("receive answer: %+v", got)
			}
			final, err := buyer.WaitReceivedFinal(ctx, got.Clave, 100*time.Millisecond)
			if err != nil || final.Estado != client.EstadoAccepted || final.CodigoMensajeHacienda != "1" {
				t.Fatalf("the tax authority's verdict on the message: %+v %v", final, err)
			}
			msg, err := buyer.ReceivedMessageXML(ctx, got.Clave)
			if err != nil {
				t.Fatal(err)
			}
			if err := xmlcheck.XSD(t, "MensajeReceptor", msg); err != nil {
				t.Errorf("xmllint: %v", err)
			}
			if err := xmlcheck.XMLSec(t, msg, caPEM); err != nil {
				t.Errorf("xmlsec1: %v", err)
			}
			if !bytes.Contains(msg, []byte("<NumeroConsecutivoReceptor>"+got.ConsecutivoReceptor+"<")) {
				t.Errorf("the message does not carry its consecutivo %s", got.ConsecutivoReceptor)
			}
			if back, err := buyer.ReceivedXML(ctx, got.Clave); err != nil || !bytes.Equal(back, xml) {
				t.Errorf("the supplier's XML as stored: %v", err)
			}
			answer, err := buyer.ReceivedResponseXML(ctx, got.Clave)
			if err != nil {
				t.Fatal(err)
			}
			if err := xmlcheck.XSD(t, "MensajeHacienda", answer); err != nil {
				t.Errorf("the answer: %v", err)
			}
			if read, err := buyer.Received(ctx, got.Clave); err != nil || read.Estado != client.EstadoAccepted || read.ConsecutivoReceptor != got.ConsecutivoReceptor {
				t.Errorf("read: %+v %v", read, err)
			}
			if _, err := other.Received(ctx, got.Clave); !errors.Is(err, client.ErrNotFound) {
				t.Errorf("another company reads it: %v", err)
			}
		})
	}
	if first == nil {
		return
	}
	t.Run("refusals", func(t *testing.T) {
		tampered := bytes.Replace(first, []byte("<TotalComprobante>"), []byte("<TotalComprobante>9"), 1)
		_, err := buyer.Receive(ctx, &client.ReceiveRequest{XML: tampered, Mensaje: "1", IDExterno: "alterado"})
		refused(t, err, "xml")
		_, err = other.Receive(ctx, &client.ReceiveRequest{XML: first, Mensaje: "1", IDExterno: "ajeno"})
		refused(t, err, "xml")
		_, err = buyer.Receive(ctx, &client.ReceiveRequest{XML: first, Mensaje: "3", DetalleMensaje: "Cambio de opinión", IDExterno: "segunda"})
		refused(t, err, "xml")
	})
}
