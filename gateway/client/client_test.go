package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/hacienda"
	"facturad/hacienda/pdf/pdfcheck"
)

// recorder is a transport that keeps the body of every answer by
// "METHOD path", so that a test can decode them strictly.
type recorder struct {
	mu     sync.Mutex
	bodies map[string][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.bodies[req.Method+" "+req.URL.Path] = b
	r.mu.Unlock()
	return resp, nil
}

func newAdmin(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(serviceURL, append([]client.Option{client.WithCredentials(adminUser, adminPass, adminToken)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// strict decodes b into v refusing any field v does not have: the
// client's types must know every field the service answers with.
func strict(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("%s: the client's type misses a field of the answer: %v\n%s", what, err, b)
	}
}

// TestTenancyCalls goes through the company, branch and user calls, and
// checks that the client's types cover every field of the real answers.
func TestTenancyCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	admin := newAdmin(t, client.WithHTTPClient(&http.Client{Transport: rec}))

	ident := nextIdent()
	form := companyForm(ident)
	created, err := admin.CreateCompany(ctx, form)
	if err != nil {
		t.Fatal(err)
	}
	if created.CompaniaID == 0 || created.SucursalID == 0 || created.APIToken == "" || created.Sucursal != "001" || created.MensajeAPI != "" {
		t.Fatalf("create company answer: %+v", created)
	}
	strict(t, "create company", rec.bodies["POST /api/companies/v4"], &client.CreatedCompany{})
	id := created.CompaniaID
	branch := admin.As(created.Credentials())

	found, err := branch.SearchCompanies(ctx, "")
	if err != nil || len(found) != 1 || found[0].ID != id || found[0].NumeroIdentificacion != ident || found[0].Activo != "S" {
		t.Fatalf("a branch user's search: %+v, %v", found, err)
	}
	strict(t, "search", rec.bodies["GET /api/companies/v4"], &[]client.Company{})

	got, err := admin.GetCompany(ctx, id)
	if err != nil || got.Clave != "1234" || got.ContrasenaHacienda != form.ContrasenaHacienda || got.UsuarioHacienda != form.UsuarioHacienda || got.ActividadComercial != "620100" {
		t.Fatalf("get company: %+v, %v", got, err)
	}
	strict(t, "get company", rec.bodies["GET "+"/api/companies/"+itoa(id)+"/v4"], &client.CompanyDetail{})
	// The company's own user reads it without its secrets; the create
	// echoed none.
	own, err := branch.GetCompany(ctx, id)
	if err != nil || own.Clave != "" || own.ContrasenaHacienda != "" || own.UsuarioHacienda != form.UsuarioHacienda {
		t.Fatalf("the company's user reads %+v, %v", own, err)
	}
	if created.Clave != "" || created.ContrasenaHacienda != "" {
		t.Fatalf("the create echoed a secret: %+v", created)
	}

	form.RazonComercial = "Nombre nuevo"
	form.Certificado = nil // keep the certificate
	up, err := admin.UpdateCompany(ctx, id, form)
	if err != nil || up.RazonComercial != "Nombre nuevo" || up.MensajeAPI != "" || up.Clave != "" || up.ContrasenaHacienda != "" {
		t.Fatalf("update company: %+v, %v", up, err)
	}
	strict(t, "update company", rec.bodies["PUT /api/companies/"+itoa(id)+"/v4"], &client.UpdatedCompany{})

	nb, err := branch.CreateBranch(ctx, id, client.BranchInput{Sucursal: "002", RazonComercial: "Sucursal dos", Provincia: "1", Canton: "01", Distrito: "01",
		OtrasSenas: "Frente al parque", CodPais: "506", Telefono: "22224444", CorreoElectronico: "sucursal@example.com"})
	if err != nil || nb.Sucursal != "002" || nb.CompaniaID != id || nb.APIToken == "" {
		t.Fatalf("create branch: %+v, %v", nb, err)
	}
	strict(t, "create branch", rec.bodies["POST /api/companies/"+itoa(id)+"/branches/v4"], &client.CreatedBranch{})
	ub, err := branch.UpdateBranch(ctx, id, nb.ID, client.BranchInput{Sucursal: "002", RazonComercial: "Sucursal 2", Provincia: "1", Canton: "01", Distrito: "01",
		OtrasSenas: "Frente al parque", CodPais: "506", Telefono: "22224444", CorreoElectronico: "sucursal@example.com", Activo: "S"})
	if err != nil || ub.RazonComercial != "Sucursal 2" {
		t.Fatalf("update branch: %+v, %v", ub, err)
	}
	strict(t, "update branch", rec.bodies["PUT /api/companies/"+itoa(id)+"/branches/"+itoa(nb.ID)+"/v4"], &client.UpdatedBranch{})
	branches, err := branch.ListBranches(ctx, id)
	if err != nil || len(branches) != 2 {
		t.Fatalf("list branches: %+v, %v", branches, err)
	}
	strict(t, "list branches", rec.bodies["GET /api/companies/"+itoa(id)+"/branches/v4"], &[]client.Branch{})

	creds, err := branch.CreateAPIUser(ctx, id, nb.ID, "caja-"+ident)
	if err != nil || creds.Usuario != "caja-"+ident || creds.Contrasena == "" || creds.APIToken == "" {
		t.Fatalf("create user: %+v, %v", creds, err)
	}
	strict(t, "create user", rec.bodies["POST /api/companies/"+itoa(id)+"/branches/"+itoa(nb.ID)+"/users/v4"], &client.Credentials{})
	cashier := admin.As(*creds)
	if _, err := cashier.ListBranches(ctx, id); err != nil {
		t.Fatalf("the new user cannot call: %v", err)
	}
	_, err = branch.CreateAPIUser(ctx, id, nb.ID, "caja-"+ident)
	var ae *client.Error
	if !errors.Is(err, client.ErrValidation) || !errors.As(err, &ae) || ae.Fields["usuario"] == nil {
		t.Fatalf("a taken usuario: want a 400 on usuario, got %v", err)
	}

	users, err := branch.ListAPIUsers(ctx, id, nb.ID)
	if err != nil || len(users) != 2 {
		t.Fatalf("list users: %+v, %v", users, err)
	}
	strict(t, "list users", rec.bodies["GET /api/companies/"+itoa(id)+"/branches/"+itoa(nb.ID)+"/users/v4"], &[]client.APIUser{})
	var userID int64
	for _, u := range users {
		if u.Usuario == creds.Usuario {
			userID = u.ID
		}
	}
	rotated, err := branch.RotateAPIToken(ctx, id, nb.ID, userID)
	if err != nil || rotated.APIToken == "" || rotated.APIToken == creds.APIToken {
		t.Fatalf("rotate token: %+v, %v", rotated, err)
	}
	if _, err := cashier.ListBranches(ctx, id); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("the old token: want 401, got %v", err)
	}
	cashier = cashier.As(client.Credentials{Usuario: creds.Usuario, Contrasena: creds.Contrasena, APIToken: rotated.APIToken})
	if _, err := cashier.ListBranches(ctx, id); err != nil {
		t.Fatalf("the new token: %v", err)
	}
	off, err := branch.SetAPIUserActive(ctx, id, nb.ID, userID, false)
	if err != nil || off.Activo != "N" {
		t.Fatalf("switch off: %+v, %v", off, err)
	}
	if _, err := cashier.ListBranches(ctx, id); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("a switched-off user: want 401, got %v", err)
	}

	conn, err := branch.TestConnection(ctx, id)
	if err != nil || conn.Token != client.ConnectionOK || conn.Certificado != client.ConnectionOK || !conn.IdentificacionCoincide ||
		conn.Ambiente != "pruebas" || conn.VencimientoCertificado != got.ExpiracionCertificado {
		t.Fatalf("connection test: %+v, %v (company %+v)", conn, err, got.Company)
	}
	strict(t, "connection test", rec.bodies["POST /api/companies/"+itoa(id)+"/prueba-conexion/v4"], &client.PruebaConexion{})

	// Another tenant's company is not found, never shown.
	other, err := admin.CreateCompany(ctx, companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := branch.GetCompany(ctx, other.CompaniaID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another tenant's company: want 404, got %v", err)
	}
	if _, err := branch.TestConnection(ctx, other.CompaniaID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another tenant's connection test: want 404, got %v", err)
	}

	r, err := admin.CreateReseller(ctx, "revendedor-"+ident)
	if err != nil || r.APIToken == "" {
		t.Fatalf("create reseller: %+v, %v", r, err)
	}
}

func itoa(i int64) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// newCompany creates a company and returns its first API user's
// credentials.
func newCompany(t *testing.T) client.Credentials {
	t.Helper()
	created, err := newAdmin(t).CreateCompany(testContext(t), companyForm(nextIdent()))
	if err != nil {
		t.Fatal(err)
	}
	return created.Credentials()
}

// newBranch creates a company and returns its first API user's client.
func newBranch(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(serviceURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c.As(newCompany(t))
}

// TestDocumentCalls sends, checks and reads a document and downloads its
// XML files.
func TestDocumentCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	branch := newBranch(t, client.WithHTTPClient(&http.Client{Transport: rec}))

	doc, err := branch.Send(ctx, invoice("DOC-1"), client.SendOptions{IncludeData: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Estado != client.EstadoSent || len(doc.Clave) != 50 || len(doc.Consecutivo) != 20 || doc.IDExterno != "DOC-1" ||
		!bytes.HasPrefix(doc.XML, []byte("<?xml")) || doc.Final() {
		t.Fatalf("send answer: %+v", doc)
	}
	strict(t, "send", rec.bodies["POST /api/documents/v4"], &client.Document{})

	final, err := branch.WaitFinal(ctx, doc.Clave, 50*time.Millisecond)
	if err != nil || final.Estado != client.EstadoAccepted || final.CodigoMensajeHacienda == "" {
		t.Fatalf("wait for the verdict: %+v, %v", final, err)
	}
	checked, err := branch.Check(ctx, doc.Clave, client.CheckOptions{IncludeXML: true, IncludeResponseXML: true})
	if err != nil || !bytes.Equal(checked.XML, doc.XML) || len(checked.XMLRespuesta) == 0 {
		t.Fatalf("check with XML: %+v, %v", checked, err)
	}
	strict(t, "check", rec.bodies["PUT /api/documents/"+doc.Clave+"/v4"], &client.Document{})

	stored, err := branch.Document(ctx, doc.Clave, client.CheckOptions{})
	if err != nil || stored.Estado != client.EstadoAccepted || stored.XML != nil {
		t.Fatalf("read: %+v, %v", stored, err)
	}
	signed, err := branch.SignedXML(ctx, doc.Clave)
	if err != nil || !bytes.Equal(signed, doc.XML) {
		t.Fatalf("signed XML: %v (%d bytes)", err, len(signed))
	}
	answer, err := branch.ResponseXML(ctx, doc.Clave)
	if err != nil || !bytes.Equal(answer, checked.XMLRespuesta) {
		t.Fatalf("response XML: %v (%d bytes)", err, len(answer))
	}
	printed, err := branch.PDF(ctx, doc.Clave)
	if err != nil || !bytes.HasPrefix(printed, []byte("%PDF-")) {
		t.Fatalf("PDF: %v (%.20q)", err, printed)
	}
	if text := pdfcheck.Text(t, printed); !strings.Contains(text, doc.Clave) || !strings.Contains(text, doc.Consecutivo) ||
		!strings.Contains(text, "Aceptado por Hacienda") {
		t.Errorf("the PDF's text does not show the document:\n%s", text)
	}
	ticket, err := branch.PDFFormato(ctx, doc.Clave, "ticket")
	if err != nil {
		t.Fatalf("PDF as a ticket: %v", err)
	}
	if w := pdfcheck.PageSizes(t, ticket)[0][0]; w < 226.7 || w > 226.8 {
		t.Errorf("the ticket is %.2f pt wide, want 80 mm", w)
	}
	if _, err := branch.PDFFormato(ctx, doc.Clave, "A4"); !errors.Is(err, client.ErrValidation) {
		t.Errorf("PDF as A4: %v", err)
	}

	// The acceptance wrote the receptor's e-mail (no mailer runs here).
	emails, err := branch.DocumentEmails(ctx, doc.Clave)
	if err != nil || len(emails) != 1 {
		t.Fatalf("e-mails: %+v, %v", emails, err)
	}
	if e := emails[0]; e.Estado != "pendiente" || !slices.Equal(e.Destinatarios, []string{"cliente@example.com"}) ||
		len(e.Rechazados) != 0 || e.Intentos != 0 || e.Creado == "" {
		t.Errorf("e-mail: %+v", e)
	}
	strict(t, "e-mails", rec.bodies["GET /api/documents/"+doc.Clave+"/email/v4"], &[]client.DocumentEmail{})
	if _, err := newBranch(t).DocumentEmails(ctx, doc.Clave); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another company's e-mails: want 404, got %v", err)
	}
	if _, err := branch.DocumentEmails(ctx, strings.Repeat("5", 50)); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("e-mails of an unknown clave: want 404, got %v", err)
	}
	// Nothing failed, so the operator's re-queue changes nothing; the
	// company itself may not re-queue.
	if again, err := newAdmin(t).RequeueEmails(ctx, doc.Clave); err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], emails[0]) {
		t.Errorf("re-queue by the admin: %+v, %v (before %+v)", again, err, emails[0])
	}
	if _, err := branch.RequeueEmails(ctx, doc.Clave); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("re-queue by the company: want 404, got %v", err)
	}

	calc, err := branch.Calculate(ctx, &hacienda.CalculateRequest{DocumentBody: invoice("").DocumentBody})
	if err != nil || calc.ResumenFactura.TotalComprobante.String() != "4239.195" {
		t.Fatalf("calculate: %+v, %v", calc, err)
	}
	strict(t, "calculate", rec.bodies["POST /api/documents/calculate/v4"], &hacienda.AmountsCalculateDocumentResponse{})
}

// TestReceivedCalls answers a supplier's document and prints it: the
// receiving company sees the supplier's document as accepted whatever its
// own message says, and no other company sees it at all.
func TestReceivedCalls(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	supplier := newBranch(t)
	ident := nextIdent()
	created, err := newAdmin(t).CreateCompany(ctx, companyForm(ident))
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := client.New(serviceURL, client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	buyer = buyer.As(created.Credentials())

	inv := invoice("SUP-1")
	inv.Receptor.Identificacion = &hacienda.IdentificacionRequest{Tipo: "02", Numero: hacienda.FlexString(ident)}
	doc, err := supplier.Send(ctx, inv, client.SendOptions{IncludeData: true})
	if err != nil {
		t.Fatal(err)
	}
	if final, err := supplier.WaitFinal(ctx, doc.Clave, 50*time.Millisecond); err != nil || final.Estado != client.EstadoAccepted {
		t.Fatalf("the supplier's document: %+v, %v", final, err)
	}
	got, err := buyer.Receive(ctx, &client.ReceiveRequest{XML: doc.XML, Mensaje: "3", DetalleMensaje: "No corresponde al pedido", IDExterno: "RCV-1"})
	if err != nil || got.Clave != doc.Clave || got.Mensaje != "3" {
		t.Fatalf("receive: %+v, %v", got, err)
	}
	strict(t, "receive", rec.bodies["POST /api/received/v4"], &client.ReceivedDocument{})

	printed, err := buyer.ReceivedPDF(ctx, doc.Clave)
	if err != nil || !bytes.HasPrefix(printed, []byte("%PDF-")) {
		t.Fatalf("received PDF: %v (%.20q)", err, printed)
	}
	text := strings.Join(strings.Fields(pdfcheck.Text(t, printed)), " ")
	for _, want := range []string{"Factura Electrónica", doc.Clave, doc.Consecutivo, "Estado 01 Aceptado por Hacienda", "Receptor Cliente de ejemplo Cédula jurídica: " + ident} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is not in the received document's PDF:\n%s", want, text)
		}
	}
	if _, err := supplier.ReceivedPDF(ctx, doc.Clave); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("the supplier prints the buyer's received document: want 404, got %v", err)
	}
	if _, err := buyer.ReceivedPDF(ctx, strings.Repeat("5", 50)); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("received PDF of an unknown clave: want 404, got %v", err)
	}
}

// TestIdempotentSend repeats a send, concurrently and afterwards: no
// repeat issues another document. A repeat that arrives while the first
// send is still at work is a 503 with a Retry-After of about as long as the
// document has been held (a second here): the client waits it out and gets
// the first send's answer, so every concurrent send answers the same
// document.
func TestIdempotentSend(t *testing.T) {
	ctx := testContext(t)
	branch := newBranch(t)
	const n = 4
	docs := make([]*client.Document, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { docs[i], errs[i] = branch.Send(ctx, invoice("IDEM-1"), client.SendOptions{}) })
	}
	wg.Wait()
	var first *client.Document
	for i := range n {
		switch {
		case errs[i] == nil && first == nil:
			first = docs[i]
		case errs[i] == nil:
			if docs[i].Clave != first.Clave || docs[i].Consecutivo != first.Consecutivo {
				t.Fatalf("send %d issued another document: %s, not %s", i, docs[i].Clave, first.Clave)
			}
		default:
			t.Fatalf("send %d: %v", i, errs[i])
		}
	}
	if first == nil {
		t.Fatal("no send succeeded")
	}
	docs[0] = first
	if _, err := branch.WaitFinal(ctx, docs[0].Clave, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	again, err := branch.Send(ctx, invoice("IDEM-1"), client.SendOptions{})
	if err != nil || again.Clave != docs[0].Clave || again.Estado != client.EstadoAccepted {
		t.Fatalf("a repeat after the verdict: %+v, %v", again, err)
	}
	next, err := branch.Send(ctx, invoice("IDEM-2"), client.SendOptions{})
	if err != nil || next.Clave == docs[0].Clave {
		t.Fatalf("another id_externo: %+v, %v", next, err)
	}
}

// TestErrorMapping checks each error answer of the real service against
// its sentinel and its fields.
func TestErrorMapping(t *testing.T) {
	ctx := testContext(t)
	branch := newBranch(t)
	stranger, err := client.New(serviceURL, client.WithCredentials("nadie", "clave-mala", "token-malo"))
	if err != nil {
		t.Fatal(err)
	}
	bad := invoice("ERR-1")
	bad.Receptor.CorreoElectronico = "no es un correo"
	tests := []struct {
		name   string
		call   func() error
		is     error
		status int
		field  string
	}{
		{"error/401 wrong credentials", func() error { _, err := stranger.SearchCompanies(ctx, ""); return err }, client.ErrUnauthorized, 401, ""},
		{"error/404 unknown clave", func() error {
			_, err := branch.Check(ctx, strings.Repeat("5", 50), client.CheckOptions{})
			return err
		}, client.ErrNotFound, 404, ""},
		{"error/404 no answer XML yet", func() error { _, err := branch.ResponseXML(ctx, strings.Repeat("5", 50)); return err }, client.ErrNotFound, 404, ""},
		{"error/404 PDF of an unknown clave", func() error { _, err := branch.PDF(ctx, strings.Repeat("5", 50)); return err }, client.ErrNotFound, 404, ""},
		{"error/400 field path", func() error { _, err := branch.Send(ctx, bad, client.SendOptions{}); return err }, client.ErrValidation, 400, "ReceptorRequest.CorreoElectronico"},
		{"error/400 body", func() error { _, err := branch.SendJSON(ctx, []byte("[1]"), false, client.SendOptions{}); return err }, client.ErrValidation, 400, "body"},
		{"error/413 too large", func() error {
			_, err := branch.SendJSON(ctx, bytes.Repeat([]byte(" "), 2<<20), false, client.SendOptions{})
			return err
		}, client.ErrTooLarge, 413, ""},
	}
	sentinels := []error{client.ErrValidation, client.ErrUnauthorized, client.ErrNotFound, client.ErrConflict, client.ErrTooLarge, client.ErrRateLimited, client.ErrUnavailable}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ae *client.Error
			if !errors.As(err, &ae) {
				t.Fatalf("want an *Error, got %v", err)
			}
			if ae.StatusCode != tt.status || ae.Message == "" || ae.RequestID == "" {
				t.Errorf("status %d message %q request id %q", ae.StatusCode, ae.Message, ae.RequestID)
			}
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.is; got != want {
					t.Errorf("errors.Is(err, %v) = %v", s, got)
				}
			}
			if tt.field != "" && len(ae.Fields[tt.field]) == 0 {
				t.Errorf("no message on %s: %v", tt.field, ae.Fields)
			}
			for _, secret := range []string{"clave-mala", "token-malo"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a credential: %v", err)
				}
			}
		})
	}
}

// flaky is a real HTTP server in front of the real service: it answers
// the first refuse calls itself with status and Retry-After, then passes
// the calls on.
type flaky struct {
	URL        string
	calls      atomic.Int64
	refuse     int64
	status     int
	retryAfter string
}

func newFlaky(t *testing.T, refuse int64, status int, retryAfter string) *flaky {
	t.Helper()
	target, err := url.Parse(serviceURL)
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{refuse: refuse, status: status, retryAfter: retryAfter}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.calls.Add(1) <= f.refuse {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			_ = json.NewEncoder(w).Encode(map[string]any{"statusCode": f.status, "message": "busy, try later", "errors": map[string]any{}})
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func adminOn(t *testing.T, base string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(base, append([]client.Option{client.WithCredentials(adminUser, adminPass, adminToken)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sleeps records the waits a client asks for, without waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

// clock is the client's clock made of s's sleeps and the real time.
func (s *sleeps) clock() client.Option { return client.WithClock(time.Now, s.sleep) }

// TestRetryAfterHonoured: a 503 or 429 with Retry-After 1, then the real
// answer: the client waits exactly the second asked for, once.
func TestRetryAfterHonoured(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		f := newFlaky(t, 1, status, "1")
		var s sleeps
		c := adminOn(t, f.URL, s.clock())
		if _, err := c.SearchCompanies(testContext(t), ""); err != nil {
			t.Fatalf("%d then 200: %v", status, err)
		}
		if got := s.got(); !slices.Equal(got, []time.Duration{time.Second}) {
			t.Errorf("%d with Retry-After 1: waited %v, want [1s]", status, got)
		}
		if got := f.calls.Load(); got != 2 {
			t.Errorf("%d: %d calls, want 2", status, got)
		}
	}
}

// TestRetryBounded: a service that keeps refusing gets MaxAttempts calls,
// the waits between them doubling from Backoff, and the caller its last
// answer.
func TestRetryBounded(t *testing.T) {
	f := newFlaky(t, 100, http.StatusTooManyRequests, "")
	var s sleeps
	c := adminOn(t, f.URL, s.clock(), client.WithRetry(client.RetryPolicy{MaxAttempts: 4, Backoff: 10 * time.Millisecond, MaxWait: 30 * time.Millisecond}))
	_, err := c.SearchCompanies(testContext(t), "")
	var ae *client.Error
	if !errors.Is(err, client.ErrRateLimited) || !errors.As(err, &ae) || ae.Message != "busy, try later" {
		t.Fatalf("want the 429, got %v", err)
	}
	if got := f.calls.Load(); got != 4 {
		t.Errorf("%d calls, want 4", got)
	}
	if got, want := s.got(), []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("waited %v, want %v (doubling, capped by MaxWait)", got, want)
	}
}

// TestRetryAfterPastDeadlineOrBound: a Retry-After that ends after the
// context's deadline, or beyond MaxWait, is not waited for: the caller
// gets the 503 at once, with its Retry-After.
func TestRetryAfterPastDeadlineOrBound(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		// Two hours asked for, one left before the deadline, and a
		// MaxWait that would allow the wait.
		f := newFlaky(t, 100, http.StatusServiceUnavailable, "7200")
		var s sleeps
		c := adminOn(t, f.URL, s.clock(), client.WithRetry(client.RetryPolicy{MaxWait: 3 * time.Hour}))
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		_, err := c.SearchCompanies(ctx, "")
		var ae *client.Error
		if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &ae) || ae.RetryAfter != 2*time.Hour {
			t.Fatalf("want the 503 with its Retry-After, got %v", err)
		}
		if got := s.got(); len(got) > 0 {
			t.Errorf("waited %v instead of answering", got)
		}
		if got := f.calls.Load(); got != 1 {
			t.Errorf("%d calls, want 1", got)
		}
	})
	t.Run("max wait", func(t *testing.T) {
		f := newFlaky(t, 100, http.StatusServiceUnavailable, "120")
		var s sleeps
		c := adminOn(t, f.URL, s.clock())
		_, err := c.SearchCompanies(testContext(t), "")
		if !errors.Is(err, client.ErrUnavailable) || f.calls.Load() != 1 || len(s.got()) > 0 {
			t.Fatalf("want one call, no wait and the 503, got %d calls, waits %v and %v", f.calls.Load(), s.got(), err)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		f := newFlaky(t, 100, http.StatusServiceUnavailable, "1")
		ctx, cancel := context.WithCancel(context.Background())
		c := adminOn(t, f.URL, client.WithClock(time.Now, func(context.Context, time.Duration) error {
			cancel() // the caller gives up during the wait
			return context.Canceled
		}))
		_, err := c.SearchCompanies(ctx, "")
		if !errors.Is(err, context.Canceled) || !errors.Is(err, client.ErrUnavailable) || f.calls.Load() != 1 {
			t.Fatalf("want the cancellation and the 503 after one call, got %d calls and %v", f.calls.Load(), err)
		}
	})
}

// TestContextDeadline: a call to a service that does not answer ends
// with the context's deadline, which cancels the request on the wire, and
// is not repeated.
func TestContextDeadline(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	cancelled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			cancelled <- struct{}{}
		}
	}))
	defer srv.Close()
	defer close(release)
	var s sleeps
	c := adminOn(t, srv.URL, s.clock())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Check(ctx, strings.Repeat("5", 50), client.CheckOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	select {
	case <-cancelled:
	case <-testContext(t).Done():
		t.Fatal("the service never saw the request cancelled")
	}
	if got := calls.Load(); got != 1 || len(s.got()) > 0 {
		t.Errorf("%d calls and waits %v, want one call and no wait", got, s.got())
	}
}

// TestConnectionFailureRetry: a connection cut before the answer is
// retried for a send with an id_externo (the service deduplicates it), and
// not for one without (a repeat would issue a second document).
func TestConnectionFailureRetry(t *testing.T) {
	creds := newCompany(t)
	target, _ := url.Parse(serviceURL)
	rp := httputil.NewSingleHostReverseProxy(target)
	var calls, cut atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if cut.Add(-1) >= 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// Fresh connections each time, so that a cut is not taken for a
	// stale keep-alive connection that net/http itself retries.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c, err := client.New(srv.URL, client.WithHTTPClient(hc), client.WithRetry(client.RetryPolicy{Backoff: 10 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	c = c.As(creds)
	ctx := testContext(t)

	cut.Store(1)
	doc, err := c.Send(ctx, invoice("CUT-1"), client.SendOptions{})
	if err != nil || len(doc.Clave) != 50 || calls.Load() != 2 {
		t.Fatalf("with id_externo: %d calls, %v", calls.Load(), err)
	}

	calls.Store(0)
	cut.Store(1)
	_, err = c.Send(ctx, invoice(""), client.SendOptions{})
	var ae *client.Error
	if err == nil || errors.As(err, &ae) || calls.Load() != 1 {
		t.Fatalf("without id_externo: want the connection's error after one call, got %d calls, %v", calls.Load(), err)
	}
}

func TestNewRefusesBadURL(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://x", "http://", "http://h/?q=1"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}

// TestNoServerInTheBuild: an integrator importing the client does not
// build the server (fasthttp, the stores, the pipeline).
func TestNoServerInTheBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", "facturad/gateway/client").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/valyala/fasthttp", "github.com/jackc/pgx", "modernc.org/sqlite", "github.com/redis/",
			"github.com/prometheus/", "facturad/gateway", "facturad/tenant", "facturad/pipeline", "facturad/signer"} {
			if dep != "facturad/gateway/client" && strings.HasPrefix(dep, banned) {
				t.Errorf("the client's build includes %s", dep)
			}
		}
	}
}

// TestValidacionesRegistro: the company form's ValidacionesRegistro is
// sent when set (even empty) and left out when nil, which keeps the
// stored value on an update; every read answers it.
func TestValidacionesRegistro(t *testing.T) {
	ctx := testContext(t)
	admin := newAdmin(t)
	str := func(s string) *string { return &s }
	form := companyForm(nextIdent())
	form.ValidacionesRegistro = str("warn")
	created, err := admin.CreateCompany(ctx, form)
	if err != nil || created.ValidacionesRegistro != "warn" {
		t.Fatalf("create: %+v, %v", created, err)
	}
	id := created.CompaniaID
	form.Certificado = nil
	for _, tt := range []struct {
		sent *string
		want string
	}{
		{nil, "warn"},
		{str("off"), "off"},
		{str(""), ""},
		{nil, ""},
		{str("refuse"), "refuse"},
		{nil, "refuse"},
	} {
		form.ValidacionesRegistro = tt.sent
		up, err := admin.UpdateCompany(ctx, id, form)
		if err != nil || up.ValidacionesRegistro != tt.want {
			t.Fatalf("update sending %v: %q, %v; want %q", tt.sent, up.ValidacionesRegistro, err, tt.want)
		}
		got, err := admin.GetCompany(ctx, id)
		if err != nil || got.ValidacionesRegistro != tt.want {
			t.Fatalf("get after sending %v: %+v, %v; want %q", tt.sent, got, err, tt.want)
		}
	}
	form.ValidacionesRegistro = str("always")
	_, err = admin.UpdateCompany(ctx, id, form)
	var ce *client.Error
	if !errors.Is(err, client.ErrValidation) || !errors.As(err, &ce) || len(ce.Fields["validacionesRegistro"]) == 0 {
		t.Fatalf("update with a bad value: %v, want a validation error on validacionesRegistro", err)
	}
}

// TestErrorCodesAndLanguage: an error carries the answer's code and each
// field message's, the same in both languages, and the messages come in
// Spanish when the client asks for them.
func TestErrorCodesAndLanguage(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		opts []client.Option
		want string
	}{
		{nil, "must be a positive integer"},
		{[]client.Option{client.WithLanguage("es-CR")}, "debe ser un número entero positivo"},
	} {
		admin := newAdmin(t, tt.opts...)
		_, err := admin.Usage(ctx, 0, "")
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Code != "validation_failed" {
			t.Fatalf("usage of company 0: %v", err)
		}
		if len(ae.Fields) != 1 {
			t.Errorf("fields %v, want one", ae.Fields)
		}
		for f, msgs := range ae.Fields {
			if len(msgs) != 1 || msgs[0] != tt.want || len(ae.Codes[f]) != 1 || ae.Codes[f][0] != "not_positive_integer" {
				t.Errorf("%s: %q coded %q, want %q coded not_positive_integer", f, msgs, ae.Codes[f], tt.want)
			}
		}
		if _, err := admin.GetCompany(ctx, 987654321); !errors.As(err, &ae) || ae.Code != "company_not_found" || !strings.Contains(ae.Message, "987654321") {
			t.Errorf("a company that does not exist: %v", err)
		}
	}
}
