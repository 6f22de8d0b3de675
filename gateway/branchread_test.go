package gateway

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"facturad/tenant"
)

// TestBranchUsersReadEveryBranch: a branch user reads every document its
// listing shows it, whichever branch of its company issued or received it,
// on every route that reads one (the document, its check, its XMLs, its
// PDF, its e-mails; the received document, its check, its three XMLs, its
// PDF) and in both listings, with the answers the issuing branch's own
// user gets; another company's user gets 404 on every one of them and a
// listing without them. One rule decides both (decision 151).
func TestBranchUsersReadEveryBranch(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) { testBranchUsersReadEveryBranch(t, k.open(t)) })
	}
}

func testBranchUsersReadEveryBranch(t *testing.T, store tenant.Store) {
	ctx := context.Background()
	w, svc := newTenantWorld(t, store)
	p, docs, _ := newTestPipeline(t, store, svc, false)
	startPipeline(t, p)
	w.testBundle = setup(t, Options{Tenants: svc, Routes: serviceRoutes(t, routeDeps{docs: p, tenants: svc})})

	a := w.createCompany(t, w.admin, "3101123456", "Sucursales S.A.")
	// Branch B of company A, with its own user; a.user is branch A's.
	branchB, userB := (&listWorld{world: w}).createBranch(t, a.user, a.id)
	stranger := w.createCompany(t, w.admin, "3101654321", "Otra Empresa S.A.")

	// A document of branch B, accepted (so it has an answer XML).
	send := func(by creds, id, receptor string) string {
		t.Helper()
		body := fmt.Sprintf(`{"id_externo":%q,"tipo_documento":"01","condicion_venta":"01",
		  "receptor":{"nombre":"Cliente S.A.","identificacion":{"tipo":"02","numero":%q}},
		  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Servicio",
		    "precioUnitario":1000,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
		  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`, id, receptor)
		r := w.do(t, "POST", "/api/documents/v4", &by, "application/json", []byte(body))
		if r.status != 200 {
			t.Fatalf("send %s: %d %s", id, r.status, r.body)
		}
		clave := r.object(t)["clave"].(string)
		if r := w.do(t, "PUT", "/api/documents/"+clave+"/v4", &by, "", nil); r.status != 200 {
			t.Fatalf("check %s: %d %s", clave, r.status, r.body)
		}
		return clave
	}
	clave := send(userB, "sucursal-b-1", "3101999999")
	d, err := docs.DocumentByClave(ctx, clave)
	if err != nil || d.BranchID != branchB {
		t.Fatalf("the document is of branch %d (%v), want B's %d", d.BranchID, err, branchB)
	}

	// A document the stranger issued to company A, received by branch B
	// as the receive call leaves it once accepted.
	supplierClave := send(stranger.user, "a-sucursales", "3101123456")
	supplier, err := docs.DocumentByClave(ctx, supplierClave)
	if err != nil {
		t.Fatal(err)
	}
	received := store.(tenant.ReceivedStore)
	rd := tenant.ReceivedDocument{
		CompanyID: a.id, BranchID: branchB, IDExterno: "recibido-b-1", Clave: supplierClave, TipoDocumento: "01",
		EmisorTipo: "02", EmisorNumero: "3101654321", EmisorNombre: "Otra Empresa S.A.", ReceptorTipo: "02", ReceptorNumero: "3101123456",
		FechaEmision: supplier.FechaEmision, TotalImpuesto: "130", TotalComprobante: "1130", SupplierXML: supplier.SignedXML,
		Mensaje: "1", Tipo: "05", Terminal: "00001", FechaMensaje: time.Now(),
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StatePending), Estado: tenant.StatePending},
	}
	if err := received.ReserveReceived(ctx, &rd); err != nil {
		t.Fatal(err)
	}
	rd.Consecutivo = fmt.Sprintf("00200001050%09d", rd.Numero)
	rd.SignedXML = []byte(`<MensajeReceptor>` + supplierClave + `</MensajeReceptor>`)
	rd.ResponseXML = []byte(`<MensajeHacienda>` + supplierClave + `</MensajeHacienda>`)
	rd.Phase, rd.Estado = tenant.PhaseFor(tenant.StateAccepted), tenant.StateAccepted
	if err := received.SaveReceived(ctx, &rd); err != nil {
		t.Fatal(err)
	}

	reads := []struct{ method, path string }{
		{"GET", "/api/documents/" + clave + "/v4?includeXml=true&includeResponseXml=true"},
		{"PUT", "/api/documents/" + clave + "/v4"},
		{"GET", "/api/documents/" + clave + "/xml/v4"},
		{"GET", "/api/documents/" + clave + "/response-xml/v4"},
		{"GET", "/api/documents/" + clave + "/pdf/v4"},
		{"GET", "/api/documents/" + clave + "/email/v4"},
		{"GET", "/api/received/" + supplierClave + "/v4"},
		{"PUT", "/api/received/" + supplierClave + "/v4"},
		{"GET", "/api/received/" + supplierClave + "/xml/v4"},
		{"GET", "/api/received/" + supplierClave + "/message-xml/v4"},
		{"GET", "/api/received/" + supplierClave + "/response-xml/v4"},
		{"GET", "/api/received/" + supplierClave + "/pdf/v4"},
	}
	t.Run("ok/a user of another branch reads what the issuing branch's user reads", func(t *testing.T) {
		for _, rt := range reads {
			own := w.do(t, rt.method, rt.path, &userB, "", nil)
			if own.status != 200 {
				t.Fatalf("%s %s as branch B's user: %d %s", rt.method, rt.path, own.status, own.body)
			}
			other := w.do(t, rt.method, rt.path, &a.user, "", nil)
			if other.status != 200 {
				t.Errorf("%s %s as branch A's user: %d %s, want 200 as for branch B's", rt.method, rt.path, other.status, other.body)
				continue
			}
			if ct := own.header.Get("Content-Type"); other.header.Get("Content-Type") != ct {
				t.Errorf("%s %s: content type %q, branch B's %q", rt.method, rt.path, other.header.Get("Content-Type"), ct)
			}
			// The stored answers are the same bytes; a PDF is drawn
			// afresh on each call.
			if rt.method == "GET" && !bytes.HasPrefix(own.body, []byte("%PDF")) && !bytes.Equal(other.body, own.body) {
				t.Errorf("%s %s: branch A's user reads\n%s\nbranch B's\n%s", rt.method, rt.path, other.body, own.body)
			}
		}
	})

	t.Run("ok/both branches' users list them", func(t *testing.T) {
		for _, who := range []creds{a.user, userB} {
			if got := listed(t, w, who, "/api/documents/v4?id_externo=sucursal-b-1"); !slices.Equal(got, []string{clave}) {
				t.Errorf("documents listed: %v, want %s", got, clave)
			}
			if got := listed(t, w, who, "/api/received/v4?id_externo=recibido-b-1"); !slices.Equal(got, []string{supplierClave}) {
				t.Errorf("received listed: %v, want %s", got, supplierClave)
			}
		}
	})

	t.Run("error/another company's user gets 404 everywhere and lists none", func(t *testing.T) {
		for _, rt := range reads {
			requireA7(t, w.do(t, rt.method, rt.path, &stranger.user, "", nil), 404)
		}
		if got := listed(t, w, stranger.user, "/api/documents/v4?id_externo=sucursal-b-1"); len(got) != 0 {
			t.Errorf("the stranger lists %v", got)
		}
		if got := listed(t, w, stranger.user, "/api/received/v4?id_externo=recibido-b-1"); len(got) != 0 {
			t.Errorf("the stranger lists received %v", got)
		}
		for _, path := range []string{"/api/documents/v4", "/api/received/v4"} {
			requireA7(t, w.do(t, "GET", fmt.Sprintf("%s?companiaId=%d", path, a.id), &stranger.user, "", nil), 404)
		}
	})
}

// listed is the claves of the first page of the listing at path.
func listed(t *testing.T, w *world, who creds, path string) []string {
	t.Helper()
	r := w.do(t, "GET", path, &who, "", nil)
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var out []string
	for _, it := range r.object(t)["items"].([]any) {
		out = append(out, it.(map[string]any)["clave"].(string))
	}
	return out
}
