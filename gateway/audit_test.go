package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"facturad/hacienda/api"
	"facturad/pipeline"
	"facturad/pipeline/delivery"
	"facturad/signer/certmint"
	"facturad/tenant"
)

// notAudited are the write routes that record nothing in the audit log,
// each with why. Every other write route records its changes: a route
// added to the service that is in neither this list nor the table of
// TestAuditEveryWriteRoute fails it.
var notAudited = map[string]string{
	"POST /api/documents/v4":                  "issuing a document: the document itself is the record (who, when, what)",
	"PUT /api/documents/{clave}/v4":           "a check asks the tax authority for a document's state; no configuration changes",
	"POST /api/documents/calculate/v4":        "stores nothing",
	"POST /api/documents/{clave}/reemitir/v4": "issuing a document like a send, which changes nothing of the rejected one: the new document, with its reference, is the record",
	"POST /api/received/v4":                   "the receiver's message is a document of its own, recorded as such",
	"PUT /api/received/{clave}/v4":            "a check, as for issued documents",
	"POST " + pipeline.CallbackPath:           "the tax authority's callback, public: it only settles a document's state",
	"POST " + ConnectionTestPath:              "the connection test logs in and opens the certificate; it changes no configuration",
}

// auditSecretPIN and the passwords below are values that must never
// reach the audit log.
const (
	auditSecretPIN   = "Pin-Secreto-5521"
	auditSecretPIN2  = "Pin-Nuevo-8830"
	auditHaciendaPW  = "Hacienda-Secreta-9931"
	auditHaciendaPW2 = "Hacienda-Nueva-4417"
)

// auditStep is one call of TestAuditEveryWriteRoute and the entry it must
// leave.
type auditStep struct {
	route     string // "METHOD pattern" of the route it drives
	requestID string
	action    string
	company   int64
	userID    int64
	username  string
	fields    []string
}

// TestAuditEveryWriteRoute drives every write route of the service with
// its own request id and checks the entry it leaves: the action, the
// actor, the request id, the company changed and the names of the fields
// sent. The routes come from the server's route table, so a write route
// added without an entry here (or in notAudited) fails. No secret sent or
// answered (passwords, PINs, certificates, tokens, webhook secrets)
// appears in the log, read from the store or through its route.
func TestAuditEveryWriteRoute(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testAuditEveryWriteRoute(t, k.open(t)) })
	}
}

func testAuditEveryWriteRoute(t *testing.T, store tenant.Store) {
	ctx := context.Background()
	w, svc := newTenantWorld(t, store, func(so *tenant.ServiceOptions) { so.WebhookURLs = delivery.URLPolicy{} })
	p, _, _ := newTestPipeline(t, store, svc, true)
	startPipeline(t, p)
	w.testBundle = setup(t, Options{Tenants: svc, Routes: serviceRoutes(t, routeDeps{docs: p, tenants: svc})})

	userID := func(company int64, name string) int64 {
		t.Helper()
		u, err := store.APIUserByUsername(ctx, company, name)
		if err != nil {
			t.Fatalf("user %s of company %d: %v", name, company, err)
		}
		return u.ID
	}
	var (
		steps   []auditStep
		secrets []string // every secret value sent or answered
		n       int
	)
	// call makes one call under a fresh request id and expects 2xx.
	call := func(route, path string, who creds, ct string, body []byte) (string, reply) {
		t.Helper()
		n++
		id := fmt.Sprintf("auditoria-%d-%s", n, rand.Text()[:6])
		method, _, _ := strings.Cut(route, " ")
		r := w.do(t, method, path, &who, ct, body, "X-Request-Id", id)
		if r.status/100 != 2 {
			t.Fatalf("%s: %d %s", route, r.status, r.body)
		}
		return id, r
	}
	step := func(route, path string, who creds, whoCompany int64, ct string, body []byte, action string, company int64, fields ...string) reply {
		t.Helper()
		id, r := call(route, path, who, ct, body)
		slices.Sort(fields)
		if fields == nil {
			fields = []string{}
		}
		steps = append(steps, auditStep{route, id, action, company, userID(whoCompany, who.user), who.user, fields})
		return r
	}
	credsOf := func(r reply) creds {
		m := r.object(t)
		c := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		secrets = append(secrets, c.token, c.pass)
		return c
	}
	mintP12 := func(id, pin string) []byte {
		m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: id, Name: "Auditada " + id,
			PIN: pin, CA: w.ca, Key: certmint.TestKey(0)})
		if err != nil {
			t.Fatal(err)
		}
		// The file's bytes, as sent and as base64, must not appear.
		secrets = append(secrets, string(m.P12[len(m.P12)/2:len(m.P12)/2+24]), base64.StdEncoding.EncodeToString(m.P12)[40:80])
		return m.P12
	}
	form := func(id, name, pin, password string) map[string]string {
		f := companyForm(id, name)
		f["Clave"], f["ContrasenaHacienda"] = pin, password
		return f
	}
	formFields := func(f map[string]string, files ...string) []string {
		return append(slices.Collect(maps.Keys(f)), files...)
	}
	secrets = append(secrets, auditSecretPIN, auditSecretPIN2, auditHaciendaPW, auditHaciendaPW2, w.admin.pass, w.admin.token)

	// A reseller: the platform's.
	r := step("POST "+pathResellers, pathResellers, w.admin, 0, "application/json", []byte(`{"usuario":"revendedor.auditado"}`),
		tenant.AuditResellerCreate, 0, "usuario")
	reseller := credsOf(r)

	// A company, with its certificate and secrets, by the reseller.
	f := form("3101777001", "Auditada Uno S.A.", auditSecretPIN, auditHaciendaPW)
	ct, body := multipartBody(t, f, map[string][]byte{"Certificado": mintP12("3101777001", auditSecretPIN)})
	id, r := call("POST "+pathCompanies, pathCompanies, reseller, ct, body)
	coID := num(r.object(t)["companiaId"])
	steps = append(steps, auditStep{"POST " + pathCompanies, id, tenant.AuditCompanyCreate, coID,
		userID(0, reseller.user), reseller.user, sorted(formFields(f, "Certificado"))})
	user := credsOf(r)

	// Another, on the branches path of some company, by the admin.
	f2 := form("3101777002", "Auditada Dos S.A.", auditSecretPIN, auditHaciendaPW)
	ct, body = multipartBody(t, f2, map[string][]byte{"Certificado": mintP12("3101777002", auditSecretPIN)})
	id, r = call("POST "+pathBranches, fmt.Sprintf("/api/companies/%d/branches/v4", coID), w.admin, ct, body)
	co2 := num(r.object(t)["companiaId"])
	if co2 == coID || co2 <= 0 {
		t.Fatalf("second company %d", co2)
	}
	steps = append(steps, auditStep{"POST " + pathBranches, id, tenant.AuditCompanyCreate, co2,
		userID(0, w.admin.user), w.admin.user, sorted(formFields(f2, "Certificado"))})
	credsOf(r)

	// A new certificate, PIN and password, by the company's own user.
	f = form("3101777001", "Auditada Uno Renovada S.A.", auditSecretPIN2, auditHaciendaPW2)
	ct, body = multipartBody(t, f, map[string][]byte{"Certificado": mintP12("3101777001", auditSecretPIN2)})
	step("PUT "+pathCompany, fmt.Sprintf("/api/companies/%d/v4", coID), user, coID, ct, body,
		tenant.AuditCompanyUpdate, coID, formFields(f, "Certificado")...)

	// The same company updated on the branches path, URL-encoded, by its
	// reseller, without a certificate.
	uf := url.Values{}
	for k, v := range form("3101777001", "Auditada Uno Otra Vez S.A.", "", auditHaciendaPW2) {
		if v != "" {
			uf.Set(k, v)
		}
	}
	step("PUT "+pathBranches, fmt.Sprintf("/api/companies/%d/branches/v4", coID), reseller, 0, "application/x-www-form-urlencoded",
		[]byte(uf.Encode()), tenant.AuditCompanyUpdate, coID, slices.Collect(maps.Keys(uf))...)

	// A branch, created and updated by the company's user.
	r = step("POST "+pathBranches, fmt.Sprintf("/api/companies/%d/branches/v4", coID), user, coID, "application/json",
		[]byte(`{"Sucursal":"002","RazonComercial":"Sucursal Norte","MonedaIdLocal":"CRC"}`),
		tenant.AuditBranchCreate, coID, "MonedaIdLocal", "RazonComercial", "Sucursal")
	branchID := num(r.object(t)["id"])
	credsOf(r)
	step("PUT "+pathBranch, fmt.Sprintf("/api/companies/%d/branches/%d/v4", coID, branchID), user, coID, "application/json",
		[]byte(`{"sucursal":"002","razonComercial":"Sucursal Norte Renovada"}`),
		tenant.AuditBranchUpdate, coID, "razonComercial", "sucursal")

	// An API user: created, switched off, its token rotated.
	usersPath := fmt.Sprintf("/api/companies/%d/branches/%d/users", coID, branchID)
	r = step("POST "+pathBranchUsers, usersPath+"/v4", user, coID, "application/json", []byte(`{"usuario":"cajero.auditado"}`),
		tenant.AuditUserCreate, coID, "usuario")
	credsOf(r)
	cajero := userID(coID, "cajero.auditado")
	step("PUT "+pathBranchUser, fmt.Sprintf("%s/%d/v4", usersPath, cajero), reseller, 0, "application/json", []byte(`{"activo":"N"}`),
		tenant.AuditUserUpdate, coID, "activo")
	r = step("POST "+pathUserToken, fmt.Sprintf("%s/%d/token/v4", usersPath, cajero), user, coID, "", nil,
		tenant.AuditTokenRotate, coID)
	secrets = append(secrets, r.object(t)["apiToken"].(string))

	// A webhook, registered and removed.
	hooks := fmt.Sprintf("/api/companies/%d/webhooks", coID)
	r = step("POST "+pathWebhooks, hooks+"/v4", user, coID, "application/json",
		[]byte(`{"url":"https://93.184.215.14/hooks","eventos":["documento.aceptado"]}`), tenant.AuditWebhookCreate, coID, "eventos", "url")
	secrets = append(secrets, r.object(t)["secreto"].(string))
	step("DELETE "+pathWebhook, fmt.Sprintf("%s/%d/v4", hooks, num(r.object(t)["id"])), user, coID, "", nil,
		tenant.AuditWebhookDelete, coID)

	// A document: its send, check and calculation record nothing; its
	// e-mails sent again by the admin are the document's company's.
	sendBody := []byte(`{"id_externo":"auditoria-1","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"},"correoElectronico":"cliente@example.com"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Servicio",
	    "precioUnitario":12500.5,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
	sendID, r := call("POST /api/documents/v4", "/api/documents/v4", user, "application/json", sendBody)
	clave, _ := r.object(t)["clave"].(string)
	checkID, _ := call("PUT /api/documents/{clave}/v4", "/api/documents/"+clave+"/v4", user, "", nil)
	calcID, _ := call("POST /api/documents/calculate/v4", "/api/documents/calculate/v4", user, "application/json", sendBody)
	step("POST "+pathDocumentEmail, "/api/documents/"+clave+"/email/v4", w.admin, 0, "", nil, tenant.AuditEmailRequeue, coID)

	// The accepted document voided in part, and a credit sale paid in
	// part: each changes what a document already issued stands for, and
	// is recorded with the document's company (A.15). A re-issue, like a
	// send, is not (notAudited).
	if st := w.do(t, "GET", "/api/documents/"+clave+"/v4", &user, "", nil).object(t)["estado"]; st != "01" {
		t.Fatalf("the document to void is in %v, not accepted", st)
	}
	step("POST "+pathDocumentVoid, "/api/documents/"+clave+"/anular/v4", user, coID, "application/json",
		[]byte(`{"id_externo":"auditoria-nc","razon":"Devolución parcial","lineas":[{"numeroLinea":1,"cantidad":1}]}`),
		tenant.AuditDocumentVoid, coID, "id_externo", "lineas", "razon")
	creditBody := strings.Replace(strings.Replace(string(sendBody), `"auditoria-1"`, `"auditoria-credito"`, 1),
		`"condicion_venta":"01"`, `"condicion_venta":"10","plazo_credito":30`, 1)
	_, r = call("POST /api/documents/v4", "/api/documents/v4", user, "application/json", []byte(creditBody))
	credito, _ := r.object(t)["clave"].(string)
	if _, r = call("PUT /api/documents/{clave}/v4", "/api/documents/"+credito+"/v4", user, "", nil); r.object(t)["estado"] != "01" {
		t.Fatalf("the credit sale was not accepted: %s", r.body)
	}
	step("POST "+pathDocumentPayment, "/api/documents/"+credito+"/recibo-pago/v4", user, coID, "application/json",
		[]byte(`{"id_externo":"auditoria-rep","monto":"1000","medioPago":"04"}`),
		tenant.AuditDocumentPayment, coID, "id_externo", "medioPago", "monto")

	// Every write route is driven or listed as recording nothing.
	driven := map[string]bool{}
	for _, s := range steps {
		driven[s.route] = true
	}
	registered := map[string]bool{}
	for _, rt := range w.srv.routes {
		key := rt.method + " " + rt.pattern
		registered[key] = true
		if rt.method == http.MethodGet || rt.method == http.MethodHead {
			if rt.audit != "" {
				t.Errorf("%s reads, but records %s", key, rt.audit)
			}
			continue
		}
		why, exempt := notAudited[key]
		switch {
		case exempt && rt.audit != "":
			t.Errorf("%s is listed as recording nothing (%s), but records %s", key, why, rt.audit)
		case exempt:
		case rt.audit == "":
			t.Errorf("%s changes something and records nothing: set its Route.Audit, or list it in notAudited with why", key)
		case !driven[key]:
			t.Errorf("%s records %s, but this test does not drive it: add a step", key, rt.audit)
		}
	}
	for key := range driven {
		if !registered[key] {
			t.Errorf("a step drives %s, which is not a route", key)
		}
	}
	for key := range notAudited {
		if !registered[key] {
			t.Errorf("notAudited lists %s, which is not a route", key)
		}
	}

	// Each step left exactly its entry.
	logs := map[int64][]tenant.AuditEntry{}
	for _, co := range []int64{0, coID, co2} {
		es, err := svc.AuditLog(ctx, tenant.Principal{Role: tenant.RoleAdmin, UserID: 1}, co, tenant.AuditQuery{Limit: tenant.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		logs[co] = es
	}
	byID := map[string][]tenant.AuditEntry{}
	for _, es := range logs {
		for _, e := range es {
			byID[e.RequestID] = append(byID[e.RequestID], e)
		}
	}
	for _, s := range steps {
		got := byID[s.requestID]
		if len(got) != 1 {
			t.Errorf("%s (%s): %d entries, want 1", s.route, s.requestID, len(got))
			continue
		}
		e := got[0]
		want := tenant.AuditEntry{ID: e.ID, At: e.At, UserID: s.userID, Username: s.username, RequestID: s.requestID,
			CompanyID: s.company, Action: s.action, Fields: s.fields}
		if e.UserID <= 0 || e.At.IsZero() || fmt.Sprint(e) != fmt.Sprint(want) {
			t.Errorf("%s: entry\n %+v\nwant\n %+v", s.route, e, want)
		}
	}
	for _, id := range []string{sendID, checkID, calcID} {
		if got := byID[id]; len(got) != 0 {
			t.Errorf("request %s (not a configuration change) recorded %+v", id, got)
		}
	}
	if total := len(logs[0]) + len(logs[coID]) + len(logs[co2]); total != len(steps) {
		t.Errorf("%d entries for %d changes", total, len(steps))
	}

	// No secret in the log: neither in the store's entries nor in the
	// route's answers.
	for co, es := range logs {
		b, err := json.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/auditoria/v4?limit=500", co), &w.admin, "", nil)
		if r.status != 200 || len(r.object(t)["items"].([]any)) != len(es) {
			t.Fatalf("log of company %d: %d %s", co, r.status, r.body)
		}
		for _, s := range secrets {
			if len(s) < 8 {
				t.Fatalf("secret %q too short to search for", s)
			}
			for what, text := range map[string][]byte{"stored": b, "answered": r.body} {
				if strings.Contains(string(text), s) {
					t.Errorf("company %d's log (%s) holds the secret %.12s…", co, what, s)
				}
			}
		}
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// The paths of the delivery routes, as the step table names them.
const (
	pathWebhooks      = "/api/companies/{companyId}/webhooks/v4"
	pathWebhook       = "/api/companies/{companyId}/webhooks/{webhookId}/v4"
	pathDocumentEmail = "/api/documents/{clave}/email/v4"

	pathDocumentVoid    = "/api/documents/{clave}/anular/v4"
	pathDocumentPayment = "/api/documents/{clave}/recibo-pago/v4"
)

// TestAuditLogRoute: the log's pages (A.10's shape, newest first, cursors
// bound to the company), who may read it (404 for anyone else) and its
// answer's shape.
func TestAuditLogRoute(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testAuditLogRoute(t, k.open(t)) })
	}
}

func testAuditLogRoute(t *testing.T, store tenant.Store) {
	ctx := context.Background()
	w, svc := newTenantWorld(t, store)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	audit, err := AuditRoute(svc, key)
	if err != nil {
		t.Fatal(err)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: []Route{audit}})
	r := w.do(t, "POST", pathResellers, &w.admin, "application/json", []byte(`{"usuario":"revendedor.uno"}`))
	reseller := creds{token: r.object(t)["apiToken"].(string), user: "revendedor.uno", pass: r.object(t)["contrasena"].(string)}
	r = w.do(t, "POST", pathResellers, &w.admin, "application/json", []byte(`{"usuario":"revendedor.dos"}`))
	other := creds{token: r.object(t)["apiToken"].(string), user: "revendedor.dos", pass: r.object(t)["contrasena"].(string)}
	a := w.createCompany(t, reseller, "3101888001", "Bitácora Alfa S.A.")
	b := w.createCompany(t, w.admin, "3101888002", "Bitácora Beta S.A.")

	// 23 more entries of company a, some sharing an instant.
	base := tenant.AuditEntry{UserID: 3, Username: "contador", CompanyID: a.id, Action: tenant.AuditBranchUpdate, Fields: []string{"sucursal"}}
	at := time.Now().Add(-24 * time.Hour)
	for i := range 23 {
		e := base
		e.RequestID = fmt.Sprintf("req-%02d", i)
		e.At = at.Add(time.Duration(i/3) * 6 * time.Minute)
		if err := svc.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	all, err := svc.AuditLog(ctx, tenant.Principal{Role: tenant.RoleAdmin, UserID: 1}, a.id, tenant.AuditQuery{Limit: tenant.MaxListLimit})
	if err != nil || len(all) != 24 { // and the company's creation
		t.Fatalf("%d entries, %v", len(all), err)
	}
	logPath := func(co int64, q string) string { return fmt.Sprintf("/api/companies/%d/auditoria/v4%s", co, q) }

	t.Run("ok/pages walk the log newest first", func(t *testing.T) {
		for _, size := range []int{1, 5, 24, 50} {
			var got []int64
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 30 {
					t.Fatal("the walk does not end")
				}
				q := fmt.Sprintf("?limit=%d", size)
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				r := w.do(t, "GET", logPath(a.id, q), &reseller, "", nil)
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				m := r.object(t)
				items := m["items"].([]any)
				if len(items) > size {
					t.Fatalf("%d items for limit %d", len(items), size)
				}
				for _, it := range items {
					e := it.(map[string]any)
					requireShape(t, "AuditEntry", e, map[string]jsonKind{"id": kInt, "cuando": kDate, "usuario": kObject,
						"requestId": kString, "companiaId": kInt, "accion": kString, "campos": kArray})
					requireShape(t, "AuditEntry.usuario", e["usuario"].(map[string]any), map[string]jsonKind{"id": kInt, "nombre": kString})
					got = append(got, num(e["id"]))
				}
				cursor, _ = m["next"].(string)
				if cursor == "" {
					break
				}
			}
			want := make([]int64, len(all))
			for i, e := range all {
				want[i] = e.ID
			}
			if !slices.Equal(got, want) {
				t.Errorf("limit %d: walked %v, want %v", size, got, want)
			}
		}
		r := w.do(t, "GET", logPath(a.id, ""), &a.user, "", nil)
		if m := r.object(t); r.status != 200 || len(m["items"].([]any)) != 24 || m["next"] != "" {
			t.Errorf("default page: %d %s", r.status, r.body)
		}
	})

	t.Run("ok/an entry as answered", func(t *testing.T) {
		r := w.do(t, "GET", logPath(a.id, "?limit=500"), &w.admin, "", nil)
		want := all[len(all)-1] // the oldest, req-00
		var e map[string]any
		for _, it := range r.object(t)["items"].([]any) {
			if m := it.(map[string]any); num(m["id"]) == want.ID {
				e = m
			}
		}
		if e == nil || want.RequestID != "req-00" {
			t.Fatalf("entry %+v not answered: %s", want, r.body)
		}
		if num(e["id"]) != want.ID || e["requestId"] != want.RequestID || e["accion"] != want.Action || num(e["companiaId"]) != a.id ||
			e["cuando"] != api.LocalTime(want.At) ||
			fmt.Sprint(e["usuario"]) != fmt.Sprintf("map[id:%d nombre:%s]", want.UserID, want.Username) || fmt.Sprint(e["campos"]) != "[sucursal]" {
			t.Errorf("answered %v for %+v", e, want)
		}
	})

	t.Run("error/cursors of another company, listing or making", func(t *testing.T) {
		r := w.do(t, "GET", logPath(a.id, "?limit=2"), &w.admin, "", nil)
		next := r.object(t)["next"].(string)
		if next == "" {
			t.Fatal("no next page")
		}
		docs := listCursors{key: key}.make("documents", a.id, tenant.ListQuery{}, all[3].ListKey())
		for _, tt := range []struct{ co int64 }{{b.id}} {
			requireField(t, requireA7(t, w.do(t, "GET", logPath(tt.co, "?cursor="+next), &w.admin, "", nil), 400), "cursor")
		}
		for _, c := range []string{docs, "not-a-cursor", next[:len(next)-2] + "AA"} {
			requireField(t, requireA7(t, w.do(t, "GET", logPath(a.id, "?cursor="+url.QueryEscape(c)), &w.admin, "", nil), 400), "cursor")
		}
		for _, l := range []string{"0", "501", "x"} {
			requireField(t, requireA7(t, w.do(t, "GET", logPath(a.id, "?limit="+l), &w.admin, "", nil), 400), "limit")
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/companies/abc/auditoria/v4", &w.admin, "", nil), 400), "CompaniaId")
	})

	t.Run("access", func(t *testing.T) {
		r := w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", a.id), &a.user, "application/json", []byte(`{"sucursal":"002"}`))
		m := r.object(t)
		branchUser := creds{token: m["apiToken"].(string), user: m["usuario"].(string), pass: m["contrasena"].(string)}
		for _, tt := range []struct {
			name   string
			who    creds
			co     int64
			status int
		}{
			{"ok/admin", w.admin, a.id, 200},
			{"ok/the company's reseller", reseller, a.id, 200},
			{"ok/the company's user", a.user, a.id, 200},
			{"ok/a user of another branch of the company", branchUser, a.id, 200},
			{"ok/admin on a company of no reseller", w.admin, b.id, 200},
			{"ok/admin on the platform's log", w.admin, 0, 200},
			{"error/another reseller", other, a.id, 404},
			{"error/a reseller on a company it does not own", reseller, b.id, 404},
			{"error/another company's user", b.user, a.id, 404},
			{"error/a reseller on the platform's log", reseller, 0, 404},
			{"error/a user on the platform's log", a.user, 0, 404},
			{"error/a company that does not exist", w.admin, 999999, 404},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := w.do(t, "GET", logPath(tt.co, ""), &tt.who, "", nil)
				if tt.status != 200 {
					if errs := requireA7(t, r, tt.status); len(errs) != 0 {
						t.Errorf("a 404 that names fields: %v", errs)
					}
					return
				}
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
			})
		}
		requireA7(t, w.do(t, "GET", logPath(a.id, ""), nil, "", nil), 401)
		// The platform's log holds the resellers' creation.
		r = w.do(t, "GET", logPath(0, ""), &w.admin, "", nil)
		if items := r.object(t)["items"].([]any); len(items) != 2 || items[0].(map[string]any)["accion"] != tenant.AuditResellerCreate {
			t.Errorf("platform's log: %s", r.body)
		}
	})
}

// TestAuditRecordFailure: a change whose entry cannot be recorded keeps
// its answer (the change was made), and the failure is logged at ERROR
// with the request id and counted; an answer outside 2xx records nothing.
func TestAuditRecordFailure(t *testing.T) {
	f := &fakeTenants{}
	b := setup(t, Options{Tenants: f})
	path := "/api/companies/2/branches/v4"
	r := b.do(t, "POST", path, &fakeBranch, "application/json", []byte(`{"sucursal":"007","razonComercial":"Siete"}`), "X-Request-Id", "ok-1")
	if r.status != 200 || len(f.audits) != 1 {
		t.Fatalf("%d %s; %d entries", r.status, r.body, len(f.audits))
	}
	e := f.audits[0]
	if e.RequestID != "ok-1" || e.CompanyID != 2 || e.UserID != 2 || e.Username != fakeBranch.user || e.Action != tenant.AuditBranchCreate ||
		!slices.Equal(sorted(e.Fields), []string{"razonComercial", "sucursal"}) {
		t.Errorf("entry %+v", e)
	}
	// A refused change records nothing.
	requireField(t, requireA7(t, b.do(t, "POST", path, &fakeBranch, "application/json", []byte(`{"sucursal":"bad"}`)), 400), "sucursal")
	requireField(t, requireA7(t, b.do(t, "POST", path, &fakeBranch, "application/json", []byte(`{"sucursal":"002"}`)), 400), "sucursal")
	if len(f.audits) != 1 {
		t.Errorf("refused changes recorded: %+v", f.audits[1:])
	}

	f.mu.Lock()
	f.auditErr = fmt.Errorf("audit store unreachable")
	f.mu.Unlock()
	r = b.do(t, "POST", path, &fakeBranch, "application/json", []byte(`{"sucursal":"008"}`), "X-Request-Id", "lost-1")
	if r.status != 200 || num(r.object(t)["id"]) != 4 {
		t.Fatalf("the change's answer became %d %s", r.status, r.body)
	}
	if got := testutil.ToFloat64(b.srv.metrics.auditFailures); got != 1 {
		t.Errorf("facturad_audit_record_failures_total = %v, want 1", got)
	}
	var logged bool
	for _, line := range strings.Split(b.logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, `"request_id":"lost-1"`) &&
			strings.Contains(line, `"action":"sucursal.crear"`) && strings.Contains(line, `"company":2`) && strings.Contains(line, "audit store unreachable") {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no ERROR line for the lost entry:\n%s", b.logs.String())
	}
	m := doWith(t, b.admin, "GET", "/metrics", nil, "", nil)
	if !strings.Contains(string(m.body), "facturad_audit_record_failures_total 1") {
		t.Errorf("/metrics lacks the failure count")
	}
}

// TestRequestFields: the names a request's body carries, never a value,
// for each body the routes take.
func TestRequestFields(t *testing.T) {
	mpCT, mp := multipartBody(t, map[string]string{"RazonSocial": "Empresa", "Clave": "1234"}, map[string][]byte{"Certificado": []byte("p12 bytes")})
	tests := []struct {
		name, ct string
		body     []byte
		want     []string
	}{
		{"ok/json object", "application/json", []byte(`{"usuario":"x","Usuario":{"a":[1,2]},"n":null}`), []string{"Usuario", "n", "usuario"}},
		{"ok/json without a content type", "", []byte(` {"url":"https://x","eventos":["a"]}`), []string{"eventos", "url"}},
		{"ok/json escaped key", "application/json", []byte(`{"cl\u0061ve":"secreto"}`), []string{"clave"}},
		{"ok/json array", "application/json", []byte(`[{"a":1}]`), nil},
		{"ok/json broken after a key", "application/json", []byte(`{"activo":"N", "x":`), []string{"activo", "x"}},
		{"ok/not json", "application/json", []byte(`usuario=x`), nil},
		{"ok/empty", "application/json", nil, nil},
		{"ok/blank", "application/json", []byte("  \n"), nil},
		{"ok/multipart with a file", mpCT, mp, []string{"Certificado", "Clave", "RazonSocial"}},
		{"ok/multipart without a boundary", "multipart/form-data", mp, nil},
		{"ok/url-encoded", "application/x-www-form-urlencoded", []byte("RazonSocial=A&ContrasenaHacienda=s%26cret&RazonSocial=B"), []string{"ContrasenaHacienda", "RazonSocial"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tenant.AuditFields(requestFields(tt.ct, tt.body))
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				t.Errorf("fields %q, want %q", got, want)
			}
		})
	}
}

func FuzzRequestFields(f *testing.F) {
	f.Add("application/json", []byte(`{"usuario":"x","activo":"S"}`))
	f.Add("application/x-www-form-urlencoded", []byte("a=1&b=2"))
	f.Add("multipart/form-data; boundary=X", []byte("--X\r\nContent-Disposition: form-data; name=\"Clave\"\r\n\r\n1234\r\n--X--\r\n"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		names := requestFields(ct, body)
		if len(names) > tenant.MaxAuditFields*4+1 {
			t.Errorf("%d names", len(names))
		}
		for _, n := range tenant.AuditFields(names) {
			if n == "" || len([]rune(n)) > tenant.MaxAuditFieldLen {
				t.Errorf("name %q", n)
			}
		}
	})
}
