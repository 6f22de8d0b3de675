package gateway

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/pdf/pdfcheck"
	"facturad/pipeline/export"
	"facturad/tenant"
)

// TestExport drives the export (A.15) over the real pipeline and store:
// issued documents sent and checked through the API, a received one
// stored as the receive call leaves it. The archive is read back with
// archive/zip: every XML byte-exact against its download route, every
// PDF a real PDF (poppler reads the clave in it), the CSV index one line
// per clave with the file names in the archive; then who may export,
// the query's refusals and the bounds on exports at once.
func TestExport(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testExport(t, k.open(t)) })
	}
}

func testExport(t *testing.T, store tenant.Store) {
	ctx := context.Background()
	w, svc := newTenantWorld(t, store)
	p, _, _ := newTestPipeline(t, store, svc, false)
	startPipeline(t, p)
	received := store.(tenant.ReceivedStore)
	docs := store.(export.Documents)
	exporter, err := export.New(export.Options{Companies: svc, Documents: docs, Received: received,
		MaxExports: 2, MaxPerCompany: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.testBundle = setup(t, Options{Tenants: svc, Routes: serviceRoutes(t, routeDeps{docs: p, tenants: svc, exporter: exporter})})

	a := w.createCompany(t, w.admin, "3101123456", "Exportadora Uno S.A.")
	b := w.createCompany(t, w.admin, "3101654321", "Proveedora Dos S.A.")

	send := func(co tenantCompany, id, receptor string) string {
		t.Helper()
		body := fmt.Sprintf(`{"id_externo":%q,"tipo_documento":"01","condicion_venta":"01",
		  "receptor":{"nombre":"Cliente, \"Comillas\" S.A.","identificacion":{"tipo":"02","numero":%q}},
		  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":2,"unidadMedida":"Sp","detalle":"Servicio",
		    "precioUnitario":12500.5,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
		  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`, id, receptor)
		r := w.do(t, "POST", "/api/documents/v4", &co.user, "application/json", []byte(body))
		if r.status != 200 {
			t.Fatalf("send %s: %d %s", id, r.status, r.body)
		}
		clave := r.object(t)["clave"].(string)
		if r := w.do(t, "PUT", "/api/documents/"+clave+"/v4", &co.user, "", nil); r.status != 200 {
			t.Fatalf("check %s: %d %s", clave, r.status, r.body)
		}
		return clave
	}
	issued := []string{send(a, "exp-1", "3101999999"), send(a, "exp-2", "3101999998"), send(a, "exp-3", "3101999997")}
	// Company b's document, received by a: its signed XML as the
	// supplier's, a message and an answer as the receive call stores them.
	supplierClave := send(b, "prov-1", "3101123456")
	supplier, err := docs.DocumentByClave(ctx, supplierClave)
	if err != nil {
		t.Fatal(err)
	}
	rd := tenant.ReceivedDocument{
		CompanyID: a.id, BranchID: a.branchID, IDExterno: "rec-1", Clave: supplierClave, TipoDocumento: "01",
		EmisorTipo: "02", EmisorNumero: "3101654321", EmisorNombre: "Proveedora Dos S.A.", ReceptorTipo: "02", ReceptorNumero: "3101123456",
		FechaEmision: supplier.FechaEmision, TotalImpuesto: "3250.13", TotalComprobante: "28251.13", SupplierXML: supplier.SignedXML,
		Mensaje: "1", Tipo: "05", Terminal: "00001", FechaMensaje: time.Now(),
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending},
	}
	if err := received.ReserveReceived(ctx, &rd); err != nil {
		t.Fatal(err)
	}
	rd.Consecutivo = fmt.Sprintf("00100001050%09d", rd.Numero)
	rd.SignedXML = []byte(`<MensajeReceptor>` + supplierClave + `</MensajeReceptor>`)
	rd.ResponseXML = []byte(`<MensajeHacienda>` + supplierClave + `</MensajeHacienda>`)
	rd.Phase, rd.Estado = tenant.PhaseFor(tenant.StateAccepted), tenant.StateAccepted
	if err := received.SaveReceived(ctx, &rd); err != nil {
		t.Fatal(err)
	}

	today := time.Now().In(hacienda.CostaRica).Format("2006-01-02")
	exportPath := func(co int64, q string) string { return fmt.Sprintf("/api/companies/%d/exportar/v4%s", co, q) }
	period := "?desde=" + today + "&hasta=" + today

	t.Run("ok/the archive", func(t *testing.T) {
		r := w.do(t, "GET", exportPath(a.id, period), &w.admin, "", nil)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/zip" {
			t.Errorf("content type %q", ct)
		}
		if cd := r.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="facturad-`) {
			t.Errorf("disposition %q", cd)
		}
		zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
		if err != nil {
			t.Fatalf("not a ZIP: %v", err)
		}
		files := map[string][]byte{}
		var names []string
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc) // checks the CRC
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			files[f.Name] = b
			names = append(names, f.Name)
		}
		if names[len(names)-1] != export.IndexName {
			t.Errorf("last entry %s, want the index", names[len(names)-1])
		}
		get := func(path string, who creds) []byte {
			t.Helper()
			r := w.do(t, "GET", path, &who, "", nil)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
			return r.body
		}
		for _, c := range issued {
			for entry, route := range map[string]string{"emitidos/" + c + ".xml": "/xml/v4", "emitidos/" + c + "-respuesta.xml": "/response-xml/v4"} {
				if want := get("/api/documents/"+c+route, a.user); !bytes.Equal(files[entry], want) || len(want) == 0 {
					t.Errorf("%s: %d bytes, the route answers %d", entry, len(files[entry]), len(want))
				}
			}
			pdf := files["emitidos/"+c+".pdf"]
			if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
				t.Fatalf("emitidos/%s.pdf is not a PDF", c)
			}
			if text := strings.Join(strings.Fields(pdfcheck.Text(t, pdf)), ""); !strings.Contains(text, c) {
				t.Errorf("the PDF of %s does not show its clave", c)
			}
		}
		for entry, route := range map[string]string{"recibidos/" + supplierClave + ".xml": "/xml/v4",
			"recibidos/" + supplierClave + "-mensaje.xml": "/message-xml/v4", "recibidos/" + supplierClave + "-respuesta.xml": "/response-xml/v4"} {
			if want := get("/api/received/"+supplierClave+route, a.user); !bytes.Equal(files[entry], want) {
				t.Errorf("%s: %q, the route answers %q", entry, files[entry], want)
			}
		}
		if !bytes.HasPrefix(files["recibidos/"+supplierClave+".pdf"], []byte("%PDF-")) {
			t.Error("the received document's PDF is missing")
		}
		// Company b's own document is not in a's export.
		if _, ok := files["emitidos/"+supplierClave+".xml"]; ok {
			t.Error("another company's issued document is in the export")
		}

		rows, err := csv.NewReader(bytes.NewReader(files[export.IndexName])).ReadAll()
		if err != nil {
			t.Fatalf("index: %v", err)
		}
		if !bytes.Contains(files[export.IndexName], []byte("\r\n")) {
			t.Error("index lines do not end in CRLF")
		}
		if !slices.Equal(rows[0], export.IndexColumns) {
			t.Fatalf("header %v", rows[0])
		}
		col := func(row []string, name string) string { return row[slices.Index(export.IndexColumns, name)] }
		byClave := map[string][]string{}
		for _, row := range rows[1:] {
			byClave[col(row, "clave")] = row
		}
		if len(rows) != 1+len(issued)+1 || len(byClave) != len(rows)-1 {
			t.Fatalf("%d index lines for %d documents: %v", len(rows)-1, len(issued)+1, rows)
		}
		for _, c := range issued {
			d, err := docs.DocumentByClave(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			row := byClave[c]
			want := map[string]string{"origen": export.OrigenEmitido, "tipoDocumento": "01", "consecutivo": d.Consecutivo,
				"estado": string(d.Estado), "emisorIdentificacion": "3101123456", "receptorNombre": `Cliente, "Comillas" S.A.`,
				"moneda": "CRC", "archivoXml": "emitidos/" + c + ".xml", "archivoRespuesta": "emitidos/" + c + "-respuesta.xml",
				"archivoPdf": "emitidos/" + c + ".pdf", "archivoMensaje": "", "fechaEmision": d.FechaEmision.In(hacienda.CostaRica).Format("2006-01-02T15:04:05")}
			for k, v := range want {
				if got := col(row, k); got != v {
					t.Errorf("%s %s = %q, want %q", c, k, got, v)
				}
			}
			if tot := col(row, "totalComprobante"); !strings.HasPrefix(tot, "28251.13") {
				t.Errorf("%s totalComprobante %q", c, tot)
			}
			for _, k := range []string{"archivoXml", "archivoRespuesta", "archivoPdf"} {
				if _, ok := files[col(row, k)]; !ok {
					t.Errorf("%s: %s names %q, not in the archive", c, k, col(row, k))
				}
			}
		}
		row := byClave[supplierClave]
		want := map[string]string{"origen": export.OrigenRecibido, "estado": "01", "emisorIdentificacion": "3101654321",
			"mensajeReceptor": "1", "consecutivoMensaje": rd.Consecutivo, "archivoMensaje": "recibidos/" + supplierClave + "-mensaje.xml",
			"totalComprobante": "28251.13", "consecutivo": supplierClave[21:41]}
		for k, v := range want {
			if got := col(row, k); got != v {
				t.Errorf("received %s = %q, want %q", k, got, v)
			}
		}
		// Nothing of the period before: an archive with the index alone.
		r = w.do(t, "GET", exportPath(a.id, "?desde=2020-01-01&hasta=2020-01-31"), &a.user, "", nil)
		zr, err = zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
		if r.status != 200 || err != nil || len(zr.File) != 1 || zr.File[0].Name != export.IndexName {
			t.Errorf("empty period: %d %v", r.status, err)
		}
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
			{"ok/the company's user", a.user, a.id, 200},
			{"ok/a user of another branch of the company", branchUser, a.id, 200},
			{"error/another company's user", b.user, a.id, 404},
			{"error/a company that does not exist", w.admin, 999999, 404},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := w.do(t, "GET", exportPath(tt.co, period), &tt.who, "", nil)
				if tt.status != 200 {
					if errs := requireA7(t, r, tt.status); len(errs) != 0 {
						t.Errorf("a 404 that names fields: %v", errs)
					}
					return
				}
				if _, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body))); r.status != 200 || err != nil {
					t.Fatalf("%d %v", r.status, err)
				}
			})
		}
		requireA7(t, w.do(t, "GET", exportPath(a.id, period), nil, "", nil), 401)
	})

	t.Run("error/query", func(t *testing.T) {
		for _, tt := range []struct{ q, field string }{
			{"", "desde"},
			{"?desde=2026-01-01", "hasta"},
			{"?hasta=2026-01-01", "desde"},
			{"?desde=ayer&hasta=2026-01-01", "desde"},
			{"?desde=2026-01-01&hasta=2026-13-01", "hasta"},
			{"?desde=2026-02-01&hasta=2026-01-31", "hasta"},
			{"?desde=2025-01-01&hasta=2026-01-02", "hasta"},
		} {
			requireField(t, requireA7(t, w.do(t, "GET", exportPath(a.id, tt.q), &w.admin, "", nil), 400), tt.field)
		}
		requireField(t, requireA7(t, w.do(t, "GET", "/api/companies/x/exportar/v4"+period, &w.admin, "", nil), 400), "CompaniaId")
		if r := w.do(t, "GET", exportPath(a.id, "?desde=2025-01-01&hasta=2026-01-01"), &w.admin, "", nil); r.status != 200 {
			t.Errorf("366 days: %d %s", r.status, r.body)
		}
	})

	t.Run("error/bounds", func(t *testing.T) {
		admin := tenant.Principal{Role: tenant.RoleAdmin, UserID: 1}
		from, to := time.Now().Add(-time.Hour), time.Now()
		x, err := exporter.Start(ctx, admin, a.id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		metrics := func() string { return string(doWith(t, w.testBundle.admin, "GET", "/metrics", nil, "", nil).body) }
		before := metrics()
		r := w.do(t, "GET", exportPath(a.id, period), &w.admin, "", nil)
		requireA7(t, r, 429)
		if r.header.Get("Retry-After") != "60" {
			t.Errorf("429 Retry-After %q", r.header.Get("Retry-After"))
		}
		y, err := exporter.Start(ctx, admin, b.id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		c := w.createCompany(t, w.admin, "3101777777", "Tercera S.A.")
		r = w.do(t, "GET", exportPath(c.id, period), &w.admin, "", nil)
		requireA7(t, r, 503)
		if r.header.Get("Retry-After") != "30" {
			t.Errorf("503 Retry-After %q", r.header.Get("Retry-After"))
		}
		// The process-wide bound is load (shed), the company's own a 4xx:
		// neither is a server error.
		after := metrics()
		for class, want := range map[string]int{"shed": 1, "5xx": 0, "4xx": 1} {
			if d := requestCount(t, after, "GET", PathExport, class) - requestCount(t, before, "GET", PathExport, class); d != want {
				t.Errorf(`status=%q grew by %d over a 429 and a 503, want %d`, class, d, want)
			}
		}
		x.Release()
		y.Release()
		y.Release() // twice frees once
		if n := exporter.Running(); n != 0 {
			t.Fatalf("%d running after release", n)
		}
		if r := w.do(t, "GET", exportPath(a.id, period), &w.admin, "", nil); r.status != 200 {
			t.Errorf("after release: %d", r.status)
		}
		// The streamed replies gave their slots back.
		if n := exporter.Running(); n != 0 {
			t.Errorf("%d running after the exports were answered", n)
		}
	})
}
