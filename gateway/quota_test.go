package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// quotaSend is a send request with its own id_externo.
func quotaSend(id string) []byte {
	return fmt.Appendf(nil, `{"id_externo":%q,"tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"}},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Servicio",
	    "precioUnitario":1000,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`, id)
}

// TestQuotaEndToEnd runs the monthly quota (A.14) over HTTP against the
// real pipeline, tenant service and store: the header on every send
// answer while a quota is set, the 402 beyond it (which takes no number),
// replays that neither count nor are refused, and the usage calls.
func TestQuotaEndToEnd(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testQuotaEndToEnd(t, k.open(t)) })
	}
}

func testQuotaEndToEnd(t *testing.T, store tenant.Store) {
	w, svc := newTenantWorld(t, store)
	p, _, _ := newTestPipeline(t, store, svc, false)
	startPipeline(t, p)
	w.testBundle = setup(t, Options{Tenants: svc, Routes: append(DocumentRoutes(p, nil, printed.Printer{}), UsageRoutes(svc)...)})
	co := w.createCompany(t, w.admin, "3101123456", "Cuota Limitada S.A.")
	free := w.createCompany(t, w.admin, "3101654321", "Sin Cuota S.A.")

	setQuota := func(by creds, quota string) {
		t.Helper()
		form := companyForm("3101123456", "Cuota Limitada S.A.")
		delete(form, "Clave") // the stored certificate stays
		form["cuotaMensual"] = quota
		ct, body := multipartBody(t, form, nil)
		if r := w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", co.id), &by, ct, body); r.status != 200 {
			t.Fatalf("set the quota to %q: %d %s", quota, r.status, r.body)
		}
	}
	send := func(c creds, id string, hdr ...string) reply {
		t.Helper()
		return w.do(t, "POST", "/api/documents/v4", &c, "application/json", quotaSend(id), hdr...)
	}
	// sent requires a document answer with the header as want says ("":
	// none) and returns its consecutivo's number.
	sent := func(r reply, want string) string {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		got, ok := r.header[api.HeaderDocumentosDisponibles]
		switch {
		case want == "" && ok:
			t.Errorf("%s: %v on a company without a quota", api.HeaderDocumentosDisponibles, got)
		case want != "" && (len(got) != 1 || got[0] != want):
			t.Errorf("%s: %v, want %s", api.HeaderDocumentosDisponibles, got, want)
		}
		return r.object(t)["numero_documento"].(string)
	}

	setQuota(w.admin, "2")
	sent(send(co.user, "q-1"), "1")
	sent(send(co.user, "q-1"), "1") // a replay counts nothing
	sent(send(co.user, "q-2"), "0")
	sent(send(free.user, "f-1"), "")

	// Beyond the quota: 402 in the A.7 form naming cuotaMensual, nothing
	// numbered.
	for _, lang := range []string{"en", "es-CR"} {
		r := send(co.user, "q-3", "Accept-Language", lang)
		if r.status != 402 || r.header.Get(api.HeaderDocumentosDisponibles) != "0" {
			t.Fatalf("%s: beyond the quota: %d %v %s", lang, r.status, r.header, r.body)
		}
		var body struct {
			StatusCode int                 `json:"statusCode"`
			Message    string              `json:"message"`
			Errors     map[string][]string `json:"errors"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		msgs := body.Errors[api.FieldCuotaMensual]
		if body.StatusCode != 402 || body.Message == "" || len(body.Errors) != 1 || len(msgs) != 1 ||
			!strings.Contains(msgs[0], tenant.MonthOf(time.Now()).Periodo) || !strings.Contains(msgs[0], " 2") {
			t.Errorf("%s: 402 body %s", lang, r.body)
		}
		spanish := strings.Contains(body.Message, "cuota mensual")
		if spanish != strings.HasPrefix(lang, "es") {
			t.Errorf("%s: message %q", lang, body.Message)
		}
	}
	// A replay at the quota is answered, not refused.
	if n := sent(send(co.user, "q-2"), "0"); n != "0000000002" {
		t.Errorf("replay answered number %s, want 0000000002", n)
	}
	// Only the admin or the company's reseller sets it: the company's own
	// form leaves it as it is.
	setQuota(co.user, "")
	if r := send(co.user, "q-3"); r.status != 402 {
		t.Errorf("after the company's own form cleared the quota: %d %s", r.status, r.body)
	}
	// Raised: the refused sends took no number.
	setQuota(w.admin, "3")
	if n := sent(send(co.user, "q-3"), "0"); n != "0000000003" {
		t.Errorf("the first document after the refusals is number %s, want 0000000003", n)
	}
	// Cleared: no limit, no header.
	setQuota(w.admin, "")
	sent(send(co.user, "q-4"), "")

	// Usage: the company's month, and the admin's list.
	r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/uso/v4", co.id), &co.user, "", nil)
	if r.status != 200 {
		t.Fatalf("usage: %d %s", r.status, r.body)
	}
	var u api.Uso
	if err := json.Unmarshal(r.body, &u); err != nil {
		t.Fatal(err)
	}
	if u.CompaniaID != co.id || u.Periodo != tenant.MonthOf(time.Now()).Periodo || u.Documentos.Total != 4 ||
		!maps.Equal(u.Documentos.PorTipo, map[string]int64{"01": 4}) || u.Documentos.PorEstado["04"]+u.Documentos.PorEstado["01"] != 4 ||
		u.MensajesReceptor.Total != 0 || u.MensajesReceptor.PorEstado == nil {
		t.Errorf("usage: %s", r.body)
	}
	r = w.do(t, "GET", "/api/uso/v4?periodo="+u.Periodo, &w.admin, "", nil)
	var list api.UsoLista
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	if list.Periodo != u.Periodo || len(list.Items) != 2 || list.Items[0].CompaniaID != co.id || list.Items[0].Documentos.Total != 4 ||
		list.Items[1].CompaniaID != free.id || list.Items[1].Documentos.Total != 1 {
		t.Errorf("list: %s", r.body)
	}
	// Another month counts nothing; a malformed one is a 400 on periodo.
	r = w.do(t, "GET", fmt.Sprintf("/api/companies/%d/uso/v4?periodo=2001-01", co.id), &w.admin, "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"total":0`) {
		t.Errorf("another month: %d %s", r.status, r.body)
	}
	for _, path := range []string{fmt.Sprintf("/api/companies/%d/uso/v4?periodo=2026-13", co.id), "/api/uso/v4?PERIODO=enero"} {
		r = w.do(t, "GET", path, &w.admin, "", nil)
		if r.status != 400 || r.object(t)["errors"].(map[string]any)[api.ParamPeriodo] == nil {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	// Another tenant's company is not found; a branch user has no list.
	for _, path := range []string{fmt.Sprintf("/api/companies/%d/uso/v4", co.id), "/api/uso/v4"} {
		if r := w.do(t, "GET", path, &free.user, "", nil); r.status != 404 {
			t.Errorf("%s as another company's user: %d %s", path, r.status, r.body)
		}
	}
}
