package gateway

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"facturad/hacienda/pdf/pdfcheck"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// TestPrintedDocument runs the company's logo and notes and the PDF
// route's layouts over HTTP: the company form takes a logo and notes
// (and refuses a bad logo on its field), the get form says so, the PDF
// prints them with the legend and the test mark of a company in pruebas,
// in the layout asked for, and removing the logo removes it from the PDF.
func TestPrintedDocument(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testPrintedDocument(t, k.open(t)) })
	}
}

func testPrintedDocument(t *testing.T, store tenant.Store) {
	w, svc := newTenantWorld(t, store)
	p, _, _ := newTestPipeline(t, store, svc, false)
	startPipeline(t, p)
	print := printed.Printer{Companies: printed.NewCache(svc, 0, 0)}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: DocumentRoutes(p, nil, print)})

	logo := testLogo(t, 160, 48)
	const id = "3101234567"
	form := companyForm(id, "Impresos del Valle S.A.")
	form["notasImpresas"] = "Cuenta IBAN CR05015202001026284066\nSINPE Móvil 8888-8888"
	cert := w.mint(t, "02", id, false)
	ct, body := multipartBody(t, form, map[string][]byte{"Certificado": cert.P12, "logo": logo})
	r := w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body)
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.object(t)
	if created["tieneLogo"] != true || created["notasImpresas"] != form["notasImpresas"] {
		t.Errorf("create answers tieneLogo %v, notasImpresas %q", created["tieneLogo"], created["notasImpresas"])
	}
	co := tenantCompany{id: num(created["companiaId"]),
		user: creds{token: created["apiToken"].(string), user: created["usuario"].(string), pass: created["contrasena"].(string)}}
	get := func() map[string]any {
		r := w.do(t, "GET", fmt.Sprintf("/api/companies/%d/v4", co.id), &co.user, "", nil)
		if r.status != 200 {
			t.Fatalf("get: %d %s", r.status, r.body)
		}
		return r.object(t)
	}
	if m := get(); m["tieneLogo"] != true || m["notasImpresas"] != form["notasImpresas"] {
		t.Errorf("get answers tieneLogo %v, notasImpresas %q", m["tieneLogo"], m["notasImpresas"])
	}

	send := []byte(`{"id_externo":"impreso-1","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"},
	    "ubicacion":{"provincia":"4","canton":"01","distrito":"03","otrasSenas":"Del parque 200 metros norte"}},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Servicio de consultoría",
	    "precioUnitario":100,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"USD","tipoCambio":500},"medioPago":[{"tipoMedioPago":"04"}]}}`)
	r = w.do(t, "POST", "/api/documents/v4", &co.user, "application/json", send)
	if r.status != 200 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	clave := r.object(t)["clave"].(string)
	if r := w.do(t, "PUT", "/api/documents/"+clave+"/v4", &co.user, "", nil); r.status != 200 || r.object(t)["estado"] != "01" {
		t.Fatalf("check: %d %s", r.status, r.body)
	}
	pdfOf := func(query string) reply {
		t.Helper()
		r := w.do(t, "GET", "/api/documents/"+clave+"/pdf/v4"+query, &co.user, "", nil)
		if r.status != 200 {
			t.Fatalf("PDF%s: %d %s", query, r.status, r.body)
		}
		return r
	}
	for _, q := range []string{"", "?formato=ticket", "?Formato=CARTA"} {
		b := pdfOf(q).body
		text := strings.Join(strings.Fields(pdfcheck.Text(t, b)), " ")
		for _, want := range []string{
			"Autorizada mediante resolución N° MH-DGT-RES-0027-2024 del 13 de noviembre de 2024",
			"SIN VALIDEZ TRIBUTARIA — AMBIENTE DE PRUEBAS", "(ambiente de pruebas, sin validez)",
			"Notas del emisor", "Cuenta IBAN CR05015202001026284066", "SINPE Móvil 8888-8888",
			"Heredia, Heredia, San Francisco", "San José, San José, Carmen",
			"USD 113,00", "CRC 56.500,00",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("PDF%s: no %q:\n%s", q, want, text)
			}
		}
		imgs := pdfcheck.Images(t, b)
		if len(imgs) != 2 || imgs[0].Width != 160 || imgs[0].Height != 48 || imgs[1].Type != "smask" {
			t.Errorf("PDF%s: images %+v, want the 160 × 48 logo and its transparency", q, imgs)
		}
		width := pdfcheck.PageSizes(t, b)[0][0]
		if ticket := q == "?formato=ticket"; ticket != (math.Abs(width-80/25.4*72) < 0.05) {
			t.Errorf("PDF%s: page width %.2f pt", q, width)
		}
	}
	r = w.do(t, "GET", "/api/documents/"+clave+"/pdf/v4?formato=A4", &co.user, "", nil)
	if r.status != 400 || r.object(t)["errors"].(map[string]any)["formato"] == nil {
		t.Errorf("formato=A4: %d %s", r.status, r.body)
	}

	// A bad logo is a 400 on its field and changes nothing.
	update := func(values map[string]string, files map[string][]byte) reply {
		form := companyForm(id, "Impresos del Valle S.A.")
		delete(form, "Clave")
		for k, v := range values {
			form[k] = v
		}
		ct, body := multipartBody(t, form, files)
		return w.do(t, "PUT", fmt.Sprintf("/api/companies/%d/v4", co.id), &co.user, ct, body)
	}
	r = update(nil, map[string][]byte{"logo": []byte("GIF89a not taken")})
	if r.status != 400 || r.object(t)["errors"].(map[string]any)["logo"] == nil {
		t.Errorf("a GIF logo: %d %s", r.status, r.body)
	}
	if m := get(); m["tieneLogo"] != true {
		t.Error("a refused logo removed the stored one")
	}
	// Removed, it is gone from the PDF; the notes stay (not sent).
	r = update(map[string]string{"quitarLogo": "S"}, nil)
	if r.status != 200 || r.object(t)["tieneLogo"] != false {
		t.Fatalf("quitarLogo: %d %s", r.status, r.body)
	}
	// The cache keeps what the company printed for its TTL: a fresh
	// printer sees the change at once.
	w.testBundle = setup(t, Options{Tenants: svc, Routes: DocumentRoutes(p, nil, printed.Printer{Companies: svc, Sandbox: true})})
	b := pdfOf("").body
	if imgs := pdfcheck.Images(t, b); len(imgs) != 0 {
		t.Errorf("images after the logo was removed: %+v", imgs)
	}
	text := strings.Join(strings.Fields(pdfcheck.Text(t, b)), " ")
	for _, want := range []string{"Cuenta IBAN CR05015202001026284066", "Estado 01 Aceptado por el simulador (sin validez)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Aceptado por Hacienda") {
		t.Errorf("the sandbox's acceptance is printed as the tax authority's:\n%s", text)
	}
}

// testLogo is a w × h PNG with a transparent border.
func testLogo(t testing.TB, w, h int) []byte {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 4; y < h-4; y++ {
		for x := 4; x < w-4; x++ {
			m.SetNRGBA(x, y, color.NRGBA{16, 62, 112, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
