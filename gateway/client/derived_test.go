package client_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/sandbox"
)

// TestDerivedCalls voids part of an accepted invoice, pays a credit sale
// in two payments down to a zero balance, and re-issues a rejected invoice
// with another receptor, against the service: each issued document is
// accepted and references its original, and the refusals name their
// fields.
func TestDerivedCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	branch := newBranch(t, client.WithHTTPClient(&http.Client{Transport: rec}))
	accepted := func(d *client.Document, want string) *client.Document {
		t.Helper()
		final, err := branch.WaitFinal(ctx, d.Clave, 50*time.Millisecond)
		if err != nil || final.Estado != want {
			t.Fatalf("%s: %+v, %v; want estado %s", d.Clave, final, err, want)
		}
		return final
	}
	reference := func(clave string) hacienda.InformacionReferencia {
		t.Helper()
		x, err := branch.SignedXML(ctx, clave)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := hacienda.ParseXML(x)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.InformacionReferencia) == 0 {
			t.Fatalf("%s references nothing", clave)
		}
		return doc.InformacionReferencia[len(doc.InformacionReferencia)-1]
	}
	refusedOn := func(err error, field string) {
		t.Helper()
		var ae *client.Error
		if !errors.Is(err, client.ErrValidation) || !errors.As(err, &ae) || len(ae.Fields[field]) == 0 {
			t.Fatalf("want a 400 on %s, got %v", field, err)
		}
	}

	// A void of one of three units of goods: a credit note, code 06.
	fe, err := branch.Send(ctx, invoice("DER-1"), client.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	accepted(fe, client.EstadoAccepted)
	void := &client.VoidRequest{IDExterno: "DER-NC-1", Razon: "Devolución de una unidad",
		Lineas: []client.VoidLine{{NumeroLinea: 1, Cantidad: "1"}}}
	nc, err := branch.Void(ctx, fe.Clave, void)
	if err != nil {
		t.Fatal(err)
	}
	if nc.Clave == fe.Clave || nc.Consecutivo[8:10] != "03" || nc.IDExterno != "DER-NC-1" {
		t.Fatalf("void answered %+v", nc)
	}
	strict(t, "void", rec.bodies["POST /api/documents/"+fe.Clave+"/anular/v4"], &client.Document{})
	accepted(nc, client.EstadoAccepted)
	if r := reference(nc.Clave); r.Numero != fe.Clave || r.TipoDocIR != "01" || r.Codigo != "06" {
		t.Errorf("credit note's reference %+v", r)
	}
	if again, err := branch.Void(ctx, fe.Clave, void); err != nil || again.Clave != nc.Clave {
		t.Errorf("the same void again: %+v, %v", again, err)
	}
	_, err = branch.Void(ctx, fe.Clave, &client.VoidRequest{IDExterno: "DER-NC-2", Razon: "Demasiado",
		Lineas: []client.VoidLine{{NumeroLinea: 1, Cantidad: "3"}}})
	refusedOn(err, "lineas[0].cantidad")
	_, err = branch.Pay(ctx, fe.Clave, &client.PaymentRequest{IDExterno: "DER-REP-0", Monto: "1", MedioPago: "01"})
	refusedOn(err, "condicion_venta")
	if _, err := newBranch(t).Void(ctx, fe.Clave, &client.VoidRequest{IDExterno: "DER-NC-3", Razon: "Ajena"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another company's void: want 404, got %v", err)
	}

	// A credit sale paid in two payments.
	sale := invoice("DER-2")
	sale.CondicionVenta, sale.PlazoCredito, sale.ResumenFactura.MedioPago = "10", "30", nil
	fe2, err := branch.Send(ctx, sale, client.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	accepted(fe2, client.EstadoAccepted)
	read := func() string {
		t.Helper()
		d, err := branch.Document(ctx, fe2.Clave, client.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.SaldoPendiente
	}
	if s := read(); s != "4239.19500" {
		t.Fatalf("saldoPendiente of a new credit sale %q, want 4239.19500", s)
	}
	strict(t, "read", rec.bodies["GET /api/documents/"+fe2.Clave+"/v4"], &client.Document{})
	rep1, err := branch.Pay(ctx, fe2.Clave, &client.PaymentRequest{IDExterno: "DER-REP-1", Monto: "1000", MedioPago: "04", Fecha: time.Now().Format(time.DateOnly)})
	if err != nil {
		t.Fatal(err)
	}
	if rep1.Consecutivo[8:10] != "10" {
		t.Fatalf("the payment issued %s, not a receipt", rep1.Consecutivo)
	}
	accepted(rep1, client.EstadoAccepted)
	if r := reference(rep1.Clave); r.Numero != fe2.Clave || r.TipoDocIR != "01" {
		t.Errorf("receipt's reference %+v", r)
	}
	if s := read(); s != "3239.19500" {
		t.Errorf("saldoPendiente after 1000 paid: %q", s)
	}
	_, err = branch.Pay(ctx, fe2.Clave, &client.PaymentRequest{IDExterno: "DER-REP-X", Monto: "3239.19501", MedioPago: "04"})
	refusedOn(err, "monto")
	rep2, err := branch.Pay(ctx, fe2.Clave, &client.PaymentRequest{IDExterno: "DER-REP-2", Monto: "3239.195", MedioPago: "01"})
	if err != nil {
		t.Fatal(err)
	}
	accepted(rep2, client.EstadoAccepted)
	if s := read(); s != "0.00000" {
		t.Errorf("saldoPendiente once paid: %q", s)
	}
	if fe.SaldoPendiente != "" {
		t.Errorf("a cash sale carries saldoPendiente %q", fe.SaldoPendiente)
	}

	// A rejected invoice re-issued to another receptor.
	if err := testSandbox.SetFaults(sandbox.Faults{RejectNext: 1, RejectDetail: []string{"-99 Rechazo de prueba"}}); err != nil {
		t.Fatal(err)
	}
	fe3, err := branch.Send(ctx, invoice("DER-3"), client.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	accepted(fe3, client.EstadoRejected)
	if err := testSandbox.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	_, err = branch.Void(ctx, fe3.Clave, &client.VoidRequest{IDExterno: "DER-NC-4", Razon: "Rechazada"})
	refusedOn(err, "clave")
	_, err = branch.Reissue(ctx, fe.Clave, &client.ReissueRequest{IDExterno: "DER-RE-0"})
	refusedOn(err, "clave")
	_, err = branch.Reissue(ctx, fe3.Clave, &client.ReissueRequest{IDExterno: "DER-RE-0", Fields: map[string]any{"receptr": "x"}})
	refusedOn(err, "receptr")
	if _, err := branch.Reissue(ctx, fe3.Clave, &client.ReissueRequest{IDExterno: "x", Fields: map[string]any{"ID_Externo": "y"}}); err == nil {
		t.Error("id_externo among the fields was sent")
	}
	re := &client.ReissueRequest{IDExterno: "DER-RE-3", Fields: map[string]any{
		"receptor": &hacienda.ReceptorRequest{Nombre: "Cliente corregido",
			Identificacion: &hacienda.IdentificacionRequest{Tipo: "01", Numero: "109870654"}, CorreoElectronico: "cliente@example.com"},
	}}
	fe4, err := branch.Reissue(ctx, fe3.Clave, re)
	if err != nil {
		t.Fatal(err)
	}
	if fe4.Clave == fe3.Clave || fe4.Consecutivo[8:10] != "01" {
		t.Fatalf("re-issue answered %+v", fe4)
	}
	accepted(fe4, client.EstadoAccepted)
	if r := reference(fe4.Clave); r.Numero != fe3.Clave || r.TipoDocIR != "10" {
		t.Errorf("re-issue's reference %+v", r)
	}
	x, err := branch.SignedXML(ctx, fe4.Clave)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := hacienda.ParseXML(x); err != nil || doc.Receptor == nil || doc.Receptor.Nombre != "Cliente corregido" || len(doc.DetalleServicio) != 1 {
		t.Errorf("the re-issue did not merge the receptor over the rejected document: %v", err)
	}
	if again, err := branch.Reissue(ctx, fe3.Clave, re); err != nil || again.Clave != fe4.Clave {
		t.Errorf("the same re-issue again: %+v, %v", again, err)
	}
}
