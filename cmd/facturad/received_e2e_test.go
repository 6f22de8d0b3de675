package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
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
// authority (the verdict of mensaje 2 reached by the background worker
// alone, the others' by check calls) and readable; a tampered supplier
// XML, one addressed to another company and a second answer are refused
// with 400s on xml saying why; and the three are listed under
// GET /api/received/v4 for A only.
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

	issue := func(t *testing.T, id string) []byte {
		t.Helper()
		supplier.t = t
		return issueTo(t, supplier, buyerID, id)
	}
	refused := func(t *testing.T, err error, field, why string) {
		t.Helper()
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(strings.Join(ae.Fields[field], " "), why) {
			t.Fatalf("got %v, want a 400 on %s saying %q", err, field, why)
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
	var (
		first    []byte
		answered []string // the claves answered, in order
	)
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
			var final *client.ReceivedDocument
			if a.req.Mensaje == client.MensajeParcial {
				// This one is settled by the background worker alone: only
				// reads, which never ask the tax authority, until it is 01;
				// a check call then finds the same verdict.
				final = waitSettledByWorker(t, ctx, buyer, got.Clave)
				if checked, err := buyer.CheckReceived(ctx, got.Clave); err != nil || checked.Estado != client.EstadoAccepted {
					t.Errorf("check after the worker's verdict: %+v %v", checked, err)
				}
			} else {
				final, err = buyer.WaitReceivedFinal(ctx, got.Clave, 100*time.Millisecond)
				if err != nil {
					t.Fatalf("the tax authority's verdict on the message: %v", err)
				}
			}
			if final.Estado != client.EstadoAccepted || final.CodigoMensajeHacienda != "1" {
				t.Fatalf("the tax authority's verdict on the message: %+v", final)
			}
			answered = append(answered, got.Clave)
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
		refused(t, err, "xml", "signature does not verify")
		_, err = other.Receive(ctx, &client.ReceiveRequest{XML: first, Mensaje: "1", IDExterno: "ajeno"})
		refused(t, err, "xml", "addressed to "+buyerID)
		_, err = buyer.Receive(ctx, &client.ReceiveRequest{XML: first, Mensaje: "3", DetalleMensaje: "Cambio de opinión", IDExterno: "segunda"})
		refused(t, err, "xml", "already answered")
	})
	t.Run("listed", func(t *testing.T) {
		// Every answered document is listed, newest first, accepted, as
		// the read call answers it; the answer's shape is the client's.
		var listed []string
		for r, err := range buyer.ReceivedDocuments(ctx, client.ListQuery{Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			if r.Estado != client.EstadoAccepted || r.Emisor.NumeroIdentificacion != supplierID || r.Receptor.NumeroIdentificacion != buyerID ||
				r.TipoDocumento != "01" || len(r.ConsecutivoReceptor) != 20 {
				t.Errorf("listed %+v", r)
			}
			listed = append(listed, r.Clave)
		}
		want := slices.Clone(answered)
		slices.Reverse(want) // issued one after the other: the last answered is the newest
		if !slices.Equal(listed, want) {
			t.Errorf("listed %v, want %v", listed, want)
		}
		buyerAPI.t = t
		status, raw := buyerAPI.do("GET", "/api/received/v4?limit=500", "", nil)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var page client.ReceivedPage
		if err := dec.Decode(&page); status != 200 || err != nil || len(page.Items) != len(answered) || page.Next != "" {
			t.Errorf("GET /api/received/v4: %d %v: %s", status, err, raw)
		}
		// Filters: the supplier is the counterparty; the company is not.
		for q, n := range map[client.ListQuery]int{
			{Receptor: supplierID, TipoDocumento: "01", Estado: client.EstadoAccepted}: len(answered),
			{Receptor: buyerID}:                                0,
			{Estado: client.EstadoRejected}:                    0,
			{IDExterno: "respuesta-" + answers[1].req.Mensaje}: 1,
		} {
			p, err := buyer.ListReceived(ctx, q, "")
			if err != nil || len(p.Items) != n {
				t.Errorf("%+v: %v %v", q, p, err)
			}
		}
		// Another company lists none of them, and may not name the buyer.
		p, err := other.ListReceived(ctx, client.ListQuery{}, "")
		if err != nil || len(p.Items) != 0 {
			t.Errorf("another company lists %v %v", p, err)
		}
		companies, err := buyer.SearchCompanies(ctx, "")
		if err != nil || len(companies) != 1 {
			t.Fatalf("the buyer's company: %v %v", companies, err)
		}
		if _, err := other.ListReceived(ctx, client.ListQuery{CompaniaID: companies[0].ID}, ""); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("another company names the buyer: %v", err)
		}
	})
}

// waitSettledByWorker reads a received document (GET, which never asks
// the tax authority) until the background worker settles its message.
func waitSettledByWorker(t *testing.T, ctx context.Context, c *client.Client, clave string) *client.ReceivedDocument {
	t.Helper()
	for {
		r, err := c.Received(ctx, clave)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if r.Final() {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the background worker did not settle the message about %s: %+v", clave, r)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// issueTo sends an FE of supplier to the company with identification
// buyerID, waits for the tax authority's acceptance and returns its signed
// XML as the service stores it.
func issueTo(t *testing.T, supplier apiClient, buyerID, id string) []byte {
	t.Helper()
	var sent document
	supplier.json("POST", "/api/documents/v4", issueBody(buyerID, id), 200, &sent)
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

// issueBody is the request issueTo sends.
func issueBody(buyerID, id string) []byte {
	return []byte(`{"id_externo":"` + id + `","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Compradora S.A.","identificacion":{"tipo":"02","numero":"` + buyerID + `"},"correoElectronico":"compras@example.com"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Servicio de consultoría",
	    "precioUnitario":12500.5,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
}
