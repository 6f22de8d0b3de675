package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/pdf"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/hacienda/sample"
	"facturad/pipeline"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// shapeDocument is the Document answer of A.5.
var shapeDocument = map[string]jsonKind{
	"id_externo": kString, "consecutivo": kString, "numero_documento": kString, "clave": kString,
	"estado": kString, "estado_humanizado": kString, "xml": kStringOrNull, "mensaje_api": kString,
	"mensaje_api_key": kString, "xml_respuesta": kStringOrNull, "codigo_mensaje_hacienda": kString,
	"mensaje_hacienda": kString,
}

// fakeDocuments answers the document routes from fixed outcomes and keeps
// the requests it was given.
type fakeDocuments struct {
	mu       sync.Mutex
	requests []*hacienda.SendDocumentRequest
	out      pipeline.Outcome
	err      error
	doc      tenant.Document
}

func (f *fakeDocuments) Send(_ context.Context, _ tenant.Principal, req *hacienda.SendDocumentRequest) (pipeline.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	return f.out, f.err
}

func (f *fakeDocuments) Check(_ context.Context, _ tenant.Principal, clave string) (pipeline.Outcome, error) {
	if clave != f.doc.Clave {
		return pipeline.Outcome{}, tenant.ErrNotFound
	}
	return f.out, f.err
}

func (f *fakeDocuments) Document(_ context.Context, _ tenant.Principal, clave string) (tenant.Document, error) {
	if clave != f.doc.Clave {
		return tenant.Document{}, tenant.ErrNotFound
	}
	return f.doc, nil
}

// docTenants authenticates one branch user and nothing else.
type docTenants struct{ Tenants }

func (docTenants) Authenticate(_ context.Context, token, user, pass string) (tenant.Principal, error) {
	if token == "t" && user == "u" && pass == "p" {
		return tenant.Principal{UserID: 1, Username: "u", Role: tenant.RoleBranch, CompanyID: 1, BranchID: 1}, nil
	}
	return tenant.Principal{}, tenant.ErrUnauthenticated
}

// never is how an answer writes a time that has not happened.
const never = "0001-01-01T00:00:00"

const testClave = "50621112600310112345600100001010000000007100000001"

func TestDocumentRoutesContract(t *testing.T) {
	doc := tenant.Document{
		IDExterno:   "ext-1",
		Consecutivo: "00100001010000000007",
		Numero:      7,
		Clave:       testClave,
		Submission:  tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent, SignedXML: []byte("<FacturaElectronica/>")},
	}
	f := &fakeDocuments{doc: doc, out: pipeline.Outcome{Document: doc, Answer: pipeline.Answer{Estado: doc.Estado}}}
	b := setup(t, Options{Tenants: docTenants{}, Routes: DocumentRoutes(f, nil, printed.Printer{})})
	u := creds{"t", "u", "p"}

	t.Run("ok/send", func(t *testing.T) {
		r := b.do(t, "POST", "/api/documents/v4?includeData=false", &u, "application/json", []byte(`{"id_externo":"ext-1","tipo_documento":"01"}`))
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := r.object(t)
		requireShape(t, "Document", m, shapeDocument)
		if m["estado"] != "04" || m["estado_humanizado"] != "Sent" || m["mensaje_api"] != "" || m["xml"] != nil ||
			m["numero_documento"] != "0000000007" || m["consecutivo"] != doc.Consecutivo || m["clave"] != testClave {
			t.Errorf("answer %v", m)
		}
		if d, ok := m["detalle_mensaje_hacienda"].([]any); !ok || len(d) != 0 {
			t.Errorf("detalle_mensaje_hacienda = %#v, want []", m["detalle_mensaje_hacienda"])
		}
		if got := f.requests[len(f.requests)-1]; got == nil || got.IDExterno != "ext-1" {
			t.Errorf("the pipeline got %+v, want the decoded request", got)
		}
	})
	t.Run("ok/send includeData", func(t *testing.T) {
		r := b.do(t, "POST", "/api/documents/v4?includeData=true", &u, "application/json", []byte(`{"id_externo":"ext-2","tipo_documento":"01"}`))
		m := r.object(t)
		if m["xml"] != base64.StdEncoding.EncodeToString(doc.SignedXML) {
			t.Errorf("xml = %v", m["xml"])
		}
	})
	t.Run("ok/send failures answer 500 with the document", func(t *testing.T) {
		for _, tc := range []struct {
			key    string
			estado tenant.State
		}{{pipeline.KeySendingDocumentError, tenant.StateNotSentYet}, {pipeline.KeyExpiredClientCertificate, tenant.StatePending}} {
			d := doc
			d.Place(tc.estado)
			f.out = pipeline.Outcome{Document: d, Answer: pipeline.Answer{Estado: tc.estado, Failed: true, Key: tc.key, Message: "explained"}}
			r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", []byte(`{}`))
			m := r.object(t)
			if r.status != 500 || m["mensaje_api_key"] != tc.key || m["estado"] != string(tc.estado) || m["mensaje_api"] != "explained" {
				t.Errorf("%s: %d %v", tc.key, r.status, m)
			}
			requireShape(t, "Document", m, shapeDocument)
		}
		f.out = pipeline.Outcome{Document: doc, Answer: pipeline.Answer{Estado: doc.Estado}}
	})
	t.Run("error/send overloaded is 503 with Retry-After", func(t *testing.T) {
		f.err = &pipeline.OverloadError{Reason: msg.BranchBusy.With(), After: 2 * time.Second}
		defer func() { f.err = nil }()
		r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", []byte(`{}`))
		if r.status != 503 || r.header.Get("Retry-After") != "2" {
			t.Fatalf("%d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
		}
	})
	t.Run("error/send validation is 400", func(t *testing.T) {
		f.err = &tenant.ValidationError{}
		f.err.(*tenant.ValidationError).Add("id_externo", msg.IDExternoReused.With())
		defer func() { f.err = nil }()
		r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", []byte(`{}`))
		m := r.object(t)
		if r.status != 400 || m["errors"].(map[string]any)["id_externo"] == nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("error/send body over 1 MiB is 413", func(t *testing.T) {
		big := append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), SendMaxBody)...)
		big = append(big, `"}`...)
		r := b.do(t, "POST", "/api/documents/v4", &u, "application/json", big)
		if r.status != 413 {
			t.Fatalf("%d", r.status)
		}
	})
	t.Run("error/no credentials", func(t *testing.T) {
		if r := b.do(t, "PUT", "/api/documents/"+testClave+"/v4", nil, "", nil); r.status != 401 {
			t.Fatalf("%d", r.status)
		}
	})
	t.Run("ok/check flags", func(t *testing.T) {
		d := doc
		d.ResponseXML, d.CodigoMensaje, d.MensajeHacienda = []byte("<MensajeHacienda/>"), "1", "Aceptado"
		d.Place(tenant.StateAccepted)
		d.DetalleMensaje = []string{"uno", "dos"}
		f.out = pipeline.Outcome{Document: d, Answer: pipeline.Answer{Estado: d.Estado}}
		defer func() { f.out = pipeline.Outcome{Document: doc, Answer: pipeline.Answer{Estado: doc.Estado}} }()
		r := b.do(t, "PUT", "/api/documents/"+testClave+"/v4?includeXml=true&includeResponseXml=true", &u, "", nil)
		m := r.object(t)
		if r.status != 200 || m["estado"] != "01" || m["codigo_mensaje_hacienda"] != "1" || m["mensaje_hacienda"] != "Aceptado" ||
			m["xml"] == nil || m["xml_respuesta"] != base64.StdEncoding.EncodeToString(d.ResponseXML) {
			t.Fatalf("%d %v", r.status, m)
		}
		if dl := m["detalle_mensaje_hacienda"].([]any); len(dl) != 2 || dl[1] != "dos" {
			t.Errorf("detail %v", dl)
		}
		r = b.do(t, "PUT", "/api/documents/"+testClave+"/v4?includeXml=false", &u, "", nil)
		if m := r.object(t); m["xml"] != nil || m["xml_respuesta"] != nil {
			t.Errorf("XML given unasked: %v", m)
		}
	})
	t.Run("error/check of an unknown clave is 404", func(t *testing.T) {
		r := b.do(t, "PUT", "/api/documents/50699999999999999999999999999999999999999999999999/v4", &u, "", nil)
		if r.status != 404 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("ok/downloads", func(t *testing.T) {
		r := b.do(t, "GET", "/api/documents/"+testClave+"/xml/v4", &u, "", nil)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") || string(r.body) != string(doc.SignedXML) {
			t.Fatalf("signed XML: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		r = b.do(t, "GET", "/api/documents/"+testClave+"/response-xml/v4", &u, "", nil)
		if r.status != 404 {
			t.Fatalf("answer XML before there is one: %d", r.status)
		}
		r = b.do(t, "GET", "/api/documents/"+testClave+"/v4", &u, "", nil)
		if r.status != 200 || r.object(t)["clave"] != testClave {
			t.Fatalf("read: %d %s", r.status, r.body)
		}
	})
	t.Run("ok/pdf is drawn from the stored XML with the stored state", func(t *testing.T) {
		sd := sample.Documents(4, 3)[2] // an NC
		sd.Clave = testClave
		x, err := hacienda.MarshalXML(sd)
		if err != nil {
			t.Fatal(err)
		}
		saved := f.doc
		defer func() { f.doc = saved }()
		f.doc.SignedXML, f.doc.Tipo = x, "03"
		f.doc.Place(tenant.StateRejected)
		f.doc.MensajeHacienda, f.doc.DetalleMensaje = "Rechazado", []string{"La fecha de emisión está fuera del plazo."}
		r := b.do(t, "GET", "/api/documents/"+testClave+"/pdf/v4", &u, "", nil)
		if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" ||
			r.header.Get("Content-Disposition") != `inline; filename="NC-`+doc.Consecutivo+`.pdf"` {
			t.Fatalf("%d %q %q %.200s", r.status, r.header.Get("Content-Type"), r.header.Get("Content-Disposition"), r.body)
		}
		text := strings.Join(strings.Fields(pdfcheck.Text(t, r.body)), " ")
		for _, want := range []string{"Nota de Crédito Electrónica", testClave, sd.NumeroConsecutivo, "Estado 02 Rechazado por Hacienda",
			"Mensaje del Ministerio de Hacienda", "La fecha de emisión está fuera del plazo."} {
			if !strings.Contains(text, want) {
				t.Errorf("%q is not in the PDF:\n%s", want, text)
			}
		}
	})
	t.Run("error/pdf of a document not signed yet is 409", func(t *testing.T) {
		saved := f.doc
		defer func() { f.doc = saved }()
		f.doc.SignedXML = nil
		f.doc.Place(tenant.StatePending)
		r := b.do(t, "GET", "/api/documents/"+testClave+"/pdf/v4", &u, "", nil)
		m := r.object(t)
		if r.status != 409 || m["statusCode"] != 409.0 || !strings.Contains(m["message"].(string), "no signed XML yet") {
			t.Fatalf("%d %s", r.status, r.body)
		}
		requireShape(t, "Error", m, map[string]jsonKind{"statusCode": kInt, "message": kString, "errors": kObject})
	})
	t.Run("error/pdf of an unknown clave is 404", func(t *testing.T) {
		r := b.do(t, "GET", "/api/documents/50699999999999999999999999999999999999999999999999/pdf/v4", &u, "", nil)
		if r.status != 404 || r.object(t)["statusCode"] != 404.0 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := b.do(t, "GET", "/api/documents/"+testClave+"/pdf/v4", nil, "", nil); r.status != 401 {
			t.Fatalf("without credentials: %d", r.status)
		}
	})
}

func TestQueryFlag(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{{"includeXml=true", true}, {"includexml=TRUE", true}, {"includeXml=1", true}, {"includeXml=false", false}, {"", false}, {"includeXml=yes", false}} {
		v, _ := url.ParseQuery(tc.q)
		if got := queryFlag(v, "includeXml"); got != tc.want {
			t.Errorf("%q: %v", tc.q, got)
		}
	}
}

// TestDocumentsEndToEnd runs the document routes over HTTP against the real
// pipeline, tenant service, signer cache, tax-authority client and sandbox.
func TestDocumentsEndToEnd(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testDocumentsEndToEnd(t, k.open(t)) })
	}
}

func testDocumentsEndToEnd(t *testing.T, store tenant.Store) {
	w, svc := newTenantWorld(t, store)
	// E-mail on: the acceptance writes the receptor's e-mail to the
	// outbox (no mailer takes it here, so it stays pending).
	p, _, sb := newTestPipeline(t, store, svc, true)
	startPipeline(t, p)
	emails, ok := store.(tenant.EmailStore) // to fail an e-mail as the mail server would
	if !ok {
		t.Fatalf("%T keeps no e-mails", store)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: append(append(DocumentRoutes(p, nil, printed.Printer{}), ReceivedRoutes(p, nil, printed.Printer{})...), EmailRoutes(p, svc)...)})
	co := w.createCompany(t, w.admin, "3101123456", "Documentos de Prueba S.A.")
	other := w.createCompany(t, w.admin, "3101654321", "Otra Empresa S.A.")

	send := []byte(`{"id_externo":"e2e-1","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"},"correoElectronico":"cliente@example.com"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Servicio de consultoría",
	    "precioUnitario":12500.5,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
	r := w.do(t, "POST", "/api/documents/v4?includeData=true", &co.user, "application/json", send)
	if r.status != 200 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	m := r.object(t)
	requireShape(t, "Document", m, shapeDocument)
	clave, _ := m["clave"].(string)
	if m["estado"] != "04" || m["mensaje_api"] != "" || len(clave) != 50 || m["xml"] == nil {
		t.Fatalf("send answer %v", m)
	}
	signed, _ := base64.StdEncoding.DecodeString(m["xml"].(string))
	if _, err := signer.Verify(signed); err != nil {
		t.Errorf("the signed XML does not verify: %v", err)
	}

	// A replay answers the same document.
	r = w.do(t, "POST", "/api/documents/v4", &co.user, "application/json", send)
	if r.status != 200 || r.object(t)["clave"] != clave {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	// Another body under the same id_externo is a 400 on it.
	r = w.do(t, "POST", "/api/documents/v4", &co.user, "application/json", bytes.Replace(send, []byte(`"cantidad":2`), []byte(`"cantidad":3`), 1))
	if r.status != 400 || r.object(t)["errors"].(map[string]any)["id_externo"] == nil {
		t.Fatalf("conflicting id_externo: %d %s", r.status, r.body)
	}

	// Before the check there is no answer XML.
	if r := w.do(t, "GET", "/api/documents/"+clave+"/response-xml/v4", &co.user, "", nil); r.status != 404 {
		t.Errorf("answer XML before the check: %d", r.status)
	}
	r = w.do(t, "PUT", "/api/documents/"+clave+"/v4?includeXml=false&includeResponseXml=true", &co.user, "", nil)
	m = r.object(t)
	if r.status != 200 || m["estado"] != "01" || m["codigo_mensaje_hacienda"] != "1" || m["xml_respuesta"] == nil || m["xml"] != nil {
		t.Fatalf("check: %d %v", r.status, m)
	}
	r = w.do(t, "GET", "/api/documents/"+clave+"/xml/v4", &co.user, "", nil)
	if r.status != 200 || !bytes.Equal(r.body, signed) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
		t.Errorf("signed XML download: %d %s", r.status, r.header.Get("Content-Type"))
	}
	r = w.do(t, "GET", "/api/documents/"+clave+"/response-xml/v4", &co.user, "", nil)
	if r.status != 200 || !bytes.Contains(r.body, []byte("MensajeHacienda")) {
		t.Errorf("answer XML download: %d %.80s", r.status, r.body)
	}
	r = w.do(t, "GET", "/api/documents/"+clave+"/v4", &w.admin, "", nil)
	if r.status != 200 || r.object(t)["estado"] != "01" {
		t.Errorf("admin read: %d %s", r.status, r.body)
	}

	// The printed document, drawn from the signed XML, read back by poppler.
	r = w.do(t, "GET", "/api/documents/"+clave+"/pdf/v4", &co.user, "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		t.Fatalf("PDF: %d %q %.80s", r.status, r.header.Get("Content-Type"), r.body)
	}
	consecutivo := clave[21:41]
	text := strings.Join(strings.Fields(pdfcheck.Text(t, r.body)), " ")
	for _, want := range []string{"Factura Electrónica", "Clave numérica " + clave, "Consecutivo " + consecutivo,
		"Estado 01 Aceptado por Hacienda", "Documentos de Prueba S.A.", "3101123456", "Cliente de Prueba", "109870654",
		"cliente@example.com", "Servicio de consultoría", "8314100000000", "12.500,50", "25.001,00", "3.250,13",
		"CRC 28.251,13", "Son: VEINTIOCHO MIL DOSCIENTOS CINCUENTA Y UN COLONES CON 13/100", "Página 1 de 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is not in the PDF:\n%s", want, text)
		}
	}
	if codes := pdfcheck.QRCodes(t, r.body, 1); len(codes) != 1 || codes[0] != clave {
		t.Errorf("the PDF's QR code reads %q, want %s", codes, clave)
	}
	if r := w.do(t, "GET", "/api/documents/"+clave+"/pdf/v4", &w.admin, "", nil); r.status != 200 {
		t.Errorf("PDF read by the admin: %d", r.status)
	}

	// The acceptance wrote the receptor's e-mail; its answer is held to
	// the OpenAPI document by do, and to the contract's fields here.
	for _, c := range []*creds{&co.user, &w.admin} {
		r = w.do(t, "GET", "/api/documents/"+clave+"/email/v4", c, "", nil)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("e-mails: %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		es := r.array(t)
		if len(es) != 1 {
			t.Fatalf("e-mails: want one, got %s", r.body)
		}
		requireShape(t, "DocumentEmail", es[0], shapeDocumentEmail)
		e := es[0]
		if e["estado"] != "pendiente" || fmt.Sprint(e["destinatarios"]) != "[cliente@example.com]" || len(e["rechazados"].([]any)) != 0 ||
			e["intentos"] != 0.0 || e["enviado"] != never || e["fallido"] != never || e["creado"] == never {
			t.Errorf("e-mail: %v", e)
		}
	}
	testDocumentEmails(t, w, emails, co, other, clave)

	// Another company's user sees nothing of it, not even that it
	// exists: its 404 names the clave it asked for, word for word as the
	// 404 of a clave nobody has.
	ghost := clave[:42] + "00000000"
	if ghost == clave {
		ghost = clave[:42] + "11111111"
	}
	for _, suffix := range []string{"/v4", "/xml/v4", "/response-xml/v4", "/pdf/v4", "/email/v4"} {
		path := "/api/documents/" + clave + suffix
		r := w.do(t, "GET", path, &other.user, "", nil)
		if r.status != 404 {
			t.Errorf("GET %s by another company: %d", path, r.status)
			continue
		}
		requireA7(t, r, 404)
		m := r.object(t)
		if m["code"] != "document_not_found" || !strings.Contains(m["message"].(string), clave) || len(m["errors"].(map[string]any)) != 0 {
			t.Errorf("GET %s by another company: %s", path, r.body)
		}
		nobody := w.do(t, "GET", "/api/documents/"+ghost+suffix, &other.user, "", nil)
		if nobody.status != 404 || strings.ReplaceAll(string(nobody.body), ghost, clave) != string(r.body) {
			t.Errorf("GET %s by another company says more than a clave nobody has:\n%s\n%s", path, r.body, nobody.body)
		}
	}
	if r := w.do(t, "PUT", "/api/documents/"+clave+"/v4", &other.user, "", nil); r.status != 404 {
		t.Errorf("check by another company: %d", r.status)
	}
	if n := sb.Stats().Submissions; n != 1 {
		t.Errorf("the sandbox received %d submissions", n)
	}

	// The other company receives an FE of this one and accepts it (A.11).
	toOther := bytes.Replace(bytes.Replace(send, []byte(`"e2e-1"`), []byte(`"e2e-2"`), 1),
		[]byte(`{"tipo":"01","numero":"109870654"}`), []byte(`{"tipo":"02","numero":"3101654321"}`), 1)
	r = w.do(t, "POST", "/api/documents/v4?includeData=true", &co.user, "application/json", toOther)
	if r.status != 200 {
		t.Fatalf("send to the other company: %d %s", r.status, r.body)
	}
	m = r.object(t)
	supplierClave := m["clave"].(string)
	if r := w.do(t, "PUT", "/api/documents/"+supplierClave+"/v4", &co.user, "", nil); r.object(t)["estado"] != "01" {
		t.Fatalf("the supplier's document is not accepted: %s", r.body)
	}
	receive := []byte(`{"xml":"` + m["xml"].(string) + `","mensaje":"1","condicionImpuesto":"01","montoTotalImpuestoAcreditar":3250.13,"id_externo":"rcv-1"}`)
	r = w.do(t, "POST", "/api/received/v4", &other.user, "application/json", receive)
	if r.status != 200 {
		t.Fatalf("receive: %d %s", r.status, r.body)
	}
	m = r.object(t)
	requireShape(t, "ReceivedDocument", m, shapeReceived)
	if m["clave"] != supplierClave || m["estado"] != "04" || m["mensaje"] != "1" || m["consecutivoReceptor"] != "00100001050000000001" ||
		m["totalFactura"] != 28251.13 || m["montoTotalImpuesto"] != 3250.13 || m["emisor"].(map[string]any)["numeroIdentificacion"] != "3101123456" {
		t.Fatalf("receive answer %v", m)
	}
	if r := w.do(t, "POST", "/api/received/v4", &other.user, "application/json", receive); r.status != 200 || r.object(t)["consecutivoReceptor"] != "00100001050000000001" {
		t.Errorf("replay: %d %s", r.status, r.body)
	}
	// A second answer, and the supplier uploading its own document.
	second := bytes.Replace(bytes.Replace(receive, []byte(`"rcv-1"`), []byte(`"rcv-2"`), 1), []byte(`"mensaje":"1"`), []byte(`"mensaje":"3","detalleMensaje":"No corresponde"`), 1)
	second = bytes.Replace(second, []byte(`"condicionImpuesto":"01","montoTotalImpuestoAcreditar":3250.13,`), nil, 1)
	for name, c := range map[string]*creds{"second answer": &other.user, "not the receptor": &co.user} {
		r := w.do(t, "POST", "/api/received/v4", c, "application/json", second)
		if r.status != 400 || r.object(t)["errors"].(map[string]any)["xml"] == nil {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	r = w.do(t, "PUT", "/api/received/"+supplierClave+"/v4", &other.user, "", nil)
	if m := r.object(t); r.status != 200 || m["estado"] != "01" || m["codigo_mensaje_hacienda"] != "1" {
		t.Fatalf("check the message: %d %s", r.status, r.body)
	}
	for path, want := range map[string]string{"xml": "FacturaElectronica", "message-xml": "MensajeReceptor", "response-xml": "MensajeHacienda"} {
		r := w.do(t, "GET", "/api/received/"+supplierClave+"/"+path+"/v4", &other.user, "", nil)
		if r.status != 200 || !bytes.Contains(r.body, []byte("<"+want)) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
			t.Errorf("GET %s: %d %.80s", path, r.status, r.body)
		}
		if r := w.do(t, "GET", "/api/received/"+supplierClave+"/"+path+"/v4", &co.user, "", nil); r.status != 404 {
			t.Errorf("GET %s by the supplier: %d", path, r.status)
		}
	}
	r = w.do(t, "GET", "/api/received/"+supplierClave+"/v4", &other.user, "", nil)
	if r.status != 200 || r.object(t)["estado"] != "01" {
		t.Errorf("read: %d %s", r.status, r.body)
	}

	// The supplier's document printed for the receiving company, read back
	// by poppler: the supplier's document as uploaded, in its own state.
	r = w.do(t, "GET", "/api/received/"+supplierClave+"/pdf/v4", &other.user, "", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) ||
		r.header.Get("Content-Disposition") != `inline; filename="FE-`+supplierClave+`.pdf"` {
		t.Fatalf("received PDF: %d %q %q %.80s", r.status, r.header.Get("Content-Type"), r.header.Get("Content-Disposition"), r.body)
	}
	text = strings.Join(strings.Fields(pdfcheck.Text(t, r.body)), " ")
	for _, want := range []string{"Factura Electrónica", "Clave numérica " + supplierClave, "Consecutivo " + supplierClave[21:41],
		"Estado 01 Aceptado por Hacienda", "Documentos de Prueba S.A.", "3101123456", "Receptor Cliente de Prueba Cédula jurídica: 3101654321",
		"Servicio de consultoría", "CRC 28.251,13", "Página 1 de 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is not in the received document's PDF:\n%s", want, text)
		}
	}
	if strings.Contains(text, "00100001050000000001") {
		t.Errorf("the received document's PDF shows the company's message:\n%s", text)
	}
	if r := w.do(t, "GET", "/api/received/50699999999999999999999999999999999999999999999999/pdf/v4", &other.user, "", nil); r.status != 404 {
		t.Errorf("received PDF of an unknown clave: %d", r.status)
	}
	// Neither the supplier nor the admin sees the company's received
	// document, nor its PDF (the supplier prints its own from its
	// documents).
	for _, c := range []*creds{&co.user, &w.admin} {
		for _, path := range []string{"/api/received/" + supplierClave + "/v4", "/api/received/" + supplierClave + "/pdf/v4"} {
			r := w.do(t, "GET", path, c, "", nil)
			if r.status != 404 {
				t.Errorf("GET %s by another: %d", path, r.status)
				continue
			}
			requireA7(t, r, 404)
		}
	}
}

// testDocumentEmails: the accepted document's e-mail to its receptor is
// listed to its company (every answer held to the OpenAPI by w.do), not
// to another; once it failed, only an admin re-queues it, and it is
// pending again with its attempt and error kept.
func testDocumentEmails(t *testing.T, w *world, emails tenant.EmailStore, co, other tenantCompany, clave string) {
	t.Helper()
	path := "/api/documents/" + clave + "/email/v4"
	// set: a time the answer gives (an unset one reads 0001-01-01T00:00:00).
	set := func(v any) bool {
		s, _ := v.(string)
		return s != "" && !strings.HasPrefix(s, "0001-")
	}
	read := func(c *creds) map[string]any {
		t.Helper()
		r := w.do(t, "GET", path, c, "", nil)
		list := r.array(t)
		if r.status != 200 || len(list) != 1 {
			t.Fatalf("e-mails: %d %s", r.status, r.body)
		}
		return list[0]
	}
	e := read(&co.user)
	if e["estado"] != "pendiente" || fmt.Sprint(e["destinatarios"]) != "[cliente@example.com]" || num(e["intentos"]) != 0 {
		t.Fatalf("the accepted document's e-mail: %v", e)
	}
	requireA7(t, w.do(t, "GET", path, &other.user, "", nil), 404)
	requireA7(t, w.do(t, "GET", "/api/documents/"+strings.Repeat("5", 50)+"/email/v4", &co.user, "", nil), 404)

	// The mail server refused it for good.
	ctx := context.Background()
	doc, err := w.store.(pipeline.Store).DocumentByClave(ctx, clave)
	if err != nil {
		t.Fatal(err)
	}
	es, err := emails.DocumentEmails(ctx, doc.ID)
	if err != nil || len(es) != 1 {
		t.Fatalf("e-mails %v: %v", es, err)
	}
	if err := emails.RecordEmail(ctx, es[0].ID, tenant.EmailResult{At: time.Now(), Error: "smtp data: 554 refused"}); err != nil {
		t.Fatal(err)
	}
	if e := read(&co.user); e["estado"] != "fallido" || !set(e["fallido"]) || set(e["proximoIntento"]) {
		t.Fatalf("failed e-mail: %v", e)
	}
	// Only the operator re-queues: the company and another get 404.
	for _, c := range []*creds{&co.user, &other.user} {
		requireA7(t, w.do(t, "POST", path, c, "", nil), 404)
	}
	if e := read(&co.user); e["estado"] != "fallido" {
		t.Fatalf("after refused re-queues: %v", e)
	}
	requireA7(t, w.do(t, "POST", "/api/documents/"+strings.Repeat("5", 50)+"/email/v4", &w.admin, "", nil), 404)
	for range 2 { // the second finds nothing failed and changes nothing
		r := w.do(t, "POST", path, &w.admin, "", nil)
		list := r.array(t)
		if r.status != 200 || len(list) != 1 {
			t.Fatalf("re-queue: %d %s", r.status, r.body)
		}
		if e := list[0]; e["estado"] != "pendiente" || num(e["intentos"]) != 1 || e["ultimoError"] != "smtp data: 554 refused" ||
			set(e["fallido"]) || !set(e["proximoIntento"]) {
			t.Fatalf("re-queued e-mail: %v", e)
		}
	}
	if e := read(&co.user); e["estado"] != "pendiente" {
		t.Fatalf("re-queued e-mail read by its company: %v", e)
	}
}

// archivedDocuments is a pipeline whose document's parts only an archive
// that cannot be read holds: a read that needs them fails as the
// archive-aware store does, one that does not gets the metadata.
type archivedDocuments struct{ doc tenant.Document }

func (a archivedDocuments) read(ctx context.Context) (tenant.Document, error) {
	if tenant.ArchivedPartsWanted(ctx) {
		return tenant.Document{}, fmt.Errorf("look up: %w", &tenant.ArchiveUnavailableError{Clave: a.doc.Clave, After: 30 * time.Second})
	}
	return a.doc, nil
}

func (a archivedDocuments) Send(ctx context.Context, _ tenant.Principal, _ *hacienda.SendDocumentRequest) (pipeline.Outcome, error) {
	d, err := a.read(ctx)
	return pipeline.Outcome{Document: d, Answer: pipeline.Answer{Estado: d.Estado}}, err
}

func (a archivedDocuments) Check(ctx context.Context, _ tenant.Principal, _ string) (pipeline.Outcome, error) {
	return a.Send(ctx, tenant.Principal{}, nil)
}

func (a archivedDocuments) Document(ctx context.Context, _ tenant.Principal, _ string) (tenant.Document, error) {
	return a.read(ctx)
}

// TestDocumentRoutesArchivedParts: the answers that show no XML ask for
// the metadata only, so they answer while the archive cannot be read;
// those that show a part answer the archive's 503 with Retry-After.
func TestDocumentRoutesArchivedParts(t *testing.T) {
	doc := tenant.Document{IDExterno: "ext-1", Consecutivo: "00100001010000000007", Numero: 7, Clave: testClave,
		Submission: tenant.Submission{Phase: tenant.PhaseAccepted, Estado: tenant.StateAccepted}}
	b := setup(t, Options{Tenants: docTenants{}, Routes: DocumentRoutes(archivedDocuments{doc}, nil, printed.Printer{})})
	u := creds{"t", "u", "p"}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/documents/" + testClave + "/v4", 200},
		{"GET", "/api/documents/" + testClave + "/v4?includeXml=false&includeResponseXml=0", 200},
		{"PUT", "/api/documents/" + testClave + "/v4", 200},
		{"POST", "/api/documents/v4", 200},
		{"POST", "/api/documents/v4?includeData=false", 200},
		{"GET", "/api/documents/" + testClave + "/v4?includeXml=true", 503},
		{"GET", "/api/documents/" + testClave + "/v4?includeResponseXml=true", 503},
		{"PUT", "/api/documents/" + testClave + "/v4?includeXml=true", 503},
		{"POST", "/api/documents/v4?includeData=true", 503},
		{"GET", "/api/documents/" + testClave + "/xml/v4", 503},
		{"GET", "/api/documents/" + testClave + "/response-xml/v4", 503},
		{"GET", "/api/documents/" + testClave + "/pdf/v4", 503},
	} {
		var body []byte
		if tc.method == "POST" {
			body = []byte(`{"id_externo":"ext-1","tipo_documento":"01"}`)
		}
		r := b.do(t, tc.method, tc.path, &u, "application/json", body)
		if r.status != tc.want {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, r.status, tc.want, r.body)
			continue
		}
		m := r.object(t)
		switch tc.want {
		case 200:
			if m["estado"] != "01" || m["clave"] != testClave {
				t.Errorf("%s %s: %v", tc.method, tc.path, m)
			}
		case 503:
			if r.header.Get("Retry-After") != "30" || !strings.Contains(fmt.Sprint(m["message"]), testClave) {
				t.Errorf("%s %s: Retry-After %q, %v", tc.method, tc.path, r.header.Get("Retry-After"), m)
			}
		}
	}
}

// TestPDFRenderBounds: the PDF routes take a render slot of the shared
// limiter; past the process's bound the answer is 503, past the company's
// 429, both with Retry-After; a freed slot draws again.
func TestPDFRenderBounds(t *testing.T) {
	sd := sample.Documents(4, 3)[0]
	sd.Clave = testClave
	x, err := hacienda.MarshalXML(sd)
	if err != nil {
		t.Fatal(err)
	}
	doc := tenant.Document{CompanyID: 1, Consecutivo: "00100001010000000007", Clave: testClave,
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StateAccepted), Estado: tenant.StateAccepted, SignedXML: x}}
	f := &fakeDocuments{doc: doc}
	lim := pdf.NewLimiter(2, 1)
	b := setup(t, Options{Tenants: docTenants{}, Routes: DocumentRoutes(f, lim, printed.Printer{})})
	u := creds{"t", "u", "p"}
	get := func() reply { return b.do(t, "GET", "/api/documents/"+testClave+"/pdf/v4", &u, "", nil) }

	if r := get(); r.status != 200 || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		t.Fatalf("free slots: %d %.100s", r.status, r.body)
	}
	// The company (1, docTenants' user's) has its one render running.
	release, err := lim.TryRender(1)
	if err != nil {
		t.Fatal(err)
	}
	if r := get(); r.status != 429 || r.header.Get("Retry-After") != "1" || r.object(t)["statusCode"] != 429.0 {
		t.Fatalf("company's bound: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	release()
	// Background work holds every process slot.
	ctx := context.Background()
	var held []func()
	for range lim.Max() {
		r, err := lim.WaitRender(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	if r := get(); r.status != 503 || r.header.Get("Retry-After") != "1" || r.object(t)["statusCode"] != 503.0 {
		t.Fatalf("process's bound: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	for _, r := range held {
		r()
	}
	if r := get(); r.status != 200 {
		t.Fatalf("slots freed: %d %s", r.status, r.body)
	}
	if lim.InUse() != 0 {
		t.Fatalf("%d slots still held after the answers", lim.InUse())
	}
}
