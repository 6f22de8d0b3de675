package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/pipeline"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// Every body a route reads is decoded strictly: a name that is no field of
// its object is a 400 naming its exact path. bodyRoutes holds one row per
// route that reads a body; TestStrictBodyRoutesListed holds the route table
// to it, so that a route added with a body fails until it has its row.

// bodyRoute is a route that reads a body: a valid body, and where a name
// it does not have goes in it.
type bodyRoute struct {
	path  string // a concrete path of the route
	creds *creds
	// json is a valid JSON body; form a valid form (sent URL-encoded and
	// multipart). A route may take both.
	json map[string]any
	form map[string]string
	// nested are places inside the body (keys and indexes down to an
	// object) where an unknown name is refused on the path given.
	nested []nestedName
	// suggest, when set, is a misspelt name (at its place in the body)
	// and the message that suggests the field meant; formSuggest the
	// same in the form of a route that takes both.
	suggest, formSuggest *suggestion
	// encodings, when set, are the only ones the route takes its
	// bodies in.
	encodings []string
}

type nestedName struct {
	at   []any  // keys (string) and indexes (int) down to an object
	path string // the error path of the unknown name "xyzzy" there
}

type suggestion struct {
	at        []any
	name      string
	path, msg string
}

// sendBody is a valid send body with every level of nesting the send reads.
func sendBody() map[string]any {
	var m map[string]any
	err := json.Unmarshal([]byte(`{"id_externo":"estricto-1","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"},
	    "ubicacion":{"provincia":"1","canton":"01","distrito":"01","otrasSenas":"Frente al parque"},
	    "telefono":{"codigoPais":"506","numTelefono":"88887777"},"correoElectronico":"cliente@example.com"},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","codigoComercial":[{"tipo":"01","codigo":"A-1"}],
	    "cantidad":2,"unidadMedida":"Sp","detalle":"Servicio","precioUnitario":12500.5,
	    "descuento":[{"montoDescuento":100,"codigoDescuento":"07"}],
	    "impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13,
	      "exoneracion":{"tipoDocumentoEX1":"04","numeroDocumento":"AL-1","nombreInstitucion":"01","fechaEmisionEX":"2026-01-01T00:00:00","tarifaExonerada":13}}]}],
	  "otrosCargos":[{"tipoDocumentoOC":"06","detalle":"Servicio","porcentajeOC":10}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]},
	  "informacionReferencia":[{"tipoDocIR":"13","fechaEmisionIR":"2026-01-01T00:00:00","razon":"Referencia"}],
	  "otros":{"otroTexto":[{"codigo":"obs","valor":"Nota"}]}}`), &m)
	if err != nil {
		panic(err)
	}
	return m
}

// documentNested are the places of a send body's nesting.
var documentNested = []nestedName{
	{[]any{"receptor"}, "ReceptorRequest.Xyzzy"},
	{[]any{"receptor", "identificacion"}, "ReceptorRequest.Identificacion.Xyzzy"},
	{[]any{"receptor", "ubicacion"}, "ReceptorRequest.Ubicacion.Xyzzy"},
	{[]any{"receptor", "telefono"}, "ReceptorRequest.Telefono.Xyzzy"},
	{[]any{"detalleServicio", 0}, "detalleServicio[0].xyzzy"},
	{[]any{"detalleServicio", 0, "codigoComercial", 0}, "detalleServicio[0].codigoComercial[0].xyzzy"},
	{[]any{"detalleServicio", 0, "descuento", 0}, "detalleServicio[0].descuento[0].xyzzy"},
	{[]any{"detalleServicio", 0, "impuesto", 0}, "detalleServicio[0].impuesto[0].xyzzy"},
	{[]any{"detalleServicio", 0, "impuesto", 0, "exoneracion"}, "detalleServicio[0].impuesto[0].exoneracion.xyzzy"},
	{[]any{"otrosCargos", 0}, "otrosCargos[0].xyzzy"},
	{[]any{"resumenFactura"}, "resumenFactura.xyzzy"},
	{[]any{"resumenFactura", "codigoTipoMoneda"}, "resumenFactura.codigoTipoMoneda.xyzzy"},
	{[]any{"resumenFactura", "medioPago", 0}, "resumenFactura.medioPago[0].xyzzy"},
	{[]any{"informacionReferencia", 0}, "informacionReferencia[0].xyzzy"},
	{[]any{"otros"}, "otros.xyzzy"},
	{[]any{"otros", "otroTexto", 0}, "otros.otroTexto[0].xyzzy"},
}

// lineSuggestion is the case: a discount amount put on the line.
var lineSuggestion = &suggestion{[]any{"detalleServicio", 0}, "montoDescuento",
	"detalleServicio[0].montoDescuento", "is not a field here; it is a field of descuento"}

const strictClave = "50601012600310188800100100001010000000001100000001"

func strictCompanyForm() map[string]string {
	return map[string]string{"TipoIdentificacion": "02", "Identificacion": "3101123456", "RazonSocial": "Empresa Estricta S.A.",
		"ActividadComercial": "620100", "UsuarioHacienda": "cpj-3-101-123456@stag.comprobanteselectronicos.go.cr",
		"ContrasenaHacienda": "secreto", "CorreoElectronico": "empresa@example.com",
		"Provincia": "1", "Canton": "01", "Distrito": "01", "OtrasSenas": "Frente al parque central"}
}

var companySuggestion = &suggestion{nil, "RazonSocail", "RazonSocail", "is not a field of this call; did you mean RazonSocial?"}

// bodyRoutes are the routes that read a body, by method and pattern.
func bodyRoutes() map[string]bodyRoute {
	return map[string]bodyRoute{
		"POST " + pathResellers: {path: "/api/resellers/v4", creds: &fakeUser, json: map[string]any{"usuario": "revendedor"},
			suggest: &suggestion{nil, "usuari", "usuari", "is not a field of this call; did you mean usuario?"}},
		"POST " + pathCompanies: {path: "/api/companies/v4", creds: &fakeUser, form: strictCompanyForm(), suggest: companySuggestion},
		"PUT " + pathCompany:    {path: "/api/companies/2/v4", creds: &fakeUser, form: strictCompanyForm(), suggest: companySuggestion},
		"PUT " + pathBranches:   {path: "/api/companies/2/branches/v4", creds: &fakeUser, form: strictCompanyForm(), suggest: companySuggestion},
		"POST " + pathBranches: {path: "/api/companies/2/branches/v4", creds: &fakeUser, json: map[string]any{"sucursal": "004", "razonComercial": "Tienda"},
			suggest: &suggestion{nil, "razonComercal", "razonComercal", "is not a field of this call; did you mean razonComercial?"},
			// A.2's second path for the company form, when multipart.
			form: strictCompanyForm(), formSuggest: companySuggestion, encodings: []string{"application/json", "multipart/form-data"}},
		"PUT " + pathBranch: {path: "/api/companies/2/branches/3/v4", creds: &fakeUser, json: map[string]any{"sucursal": "001", "activo": "S"}, suggest: &suggestion{nil, "createdAt", "createdAt", msg.ServiceField.With().String()}},
		"POST " + pathBranchUsers: {path: "/api/companies/2/branches/3/users/v4", creds: &fakeUser, json: map[string]any{"usuario": "cajero"},
			suggest: &suggestion{nil, "apiToken", "apiToken", msg.ServiceField.With().String()}},
		"PUT " + pathBranchUser: {path: "/api/companies/2/branches/3/users/5/v4", creds: &fakeUser, json: map[string]any{"activo": "N"},
			suggest: &suggestion{nil, "actvo", "actvo", "is not a field of this call; did you mean activo?"}},
		"POST /api/companies/{companyId}/webhooks/v4": {path: "/api/companies/2/webhooks/v4", creds: &fakeUser,
			json:    map[string]any{"url": "https://example.com/h", "eventos": []any{"documento.aceptado"}},
			suggest: &suggestion{nil, "evento", "evento", "is not a field of this call; did you mean eventos?"}},
		"POST /api/documents/v4": {path: "/api/documents/v4", creds: &fakeBranch, json: sendBody(), nested: documentNested,
			suggest: lineSuggestion},
		"POST /api/documents/calculate/v4": {path: "/api/documents/calculate/v4", creds: &fakeBranch, json: sendBody(), nested: documentNested,
			suggest: lineSuggestion},
		"POST /api/received/v4": {path: "/api/received/v4", creds: &fakeBranch,
			json:    map[string]any{"xml": "PEZhY3R1cmFFbGVjdHJvbmljYS8+", "mensaje": "1", "id_externo": "r-1"},
			suggest: &suggestion{nil, "detalle", "detalle", "is not a field of this call; did you mean detalleMensaje?"}},
		"POST /api/documents/{clave}/anular/v4": {path: "/api/documents/" + strictClave + "/anular/v4", creds: &fakeBranch,
			json:    map[string]any{"id_externo": "nc-1", "razon": "Devolución", "lineas": []any{map[string]any{"numeroLinea": 1, "cantidad": 1}}},
			nested:  []nestedName{{[]any{"lineas", 0}, "lineas[0].xyzzy"}},
			suggest: &suggestion{nil, "lines", "lines", "is not a field of this call; did you mean lineas?"}},
		"POST /api/documents/{clave}/reemitir/v4": {path: "/api/documents/" + strictClave + "/reemitir/v4", creds: &fakeBranch,
			json: sendBody(), nested: documentNested, suggest: lineSuggestion},
		"POST /api/documents/{clave}/recibo-pago/v4": {path: "/api/documents/" + strictClave + "/recibo-pago/v4", creds: &fakeBranch,
			json:    map[string]any{"id_externo": "rep-1", "monto": 1000, "medioPago": "04"},
			suggest: &suggestion{nil, "medio_pago", "medio_pago", "is not a field of this call; did you mean medioPago?"}},
	}
}

// noBodyRoutes are the routes with a method that may carry a body which
// read none, and why.
var noBodyRoutes = map[string]string{
	"PUT /api/documents/{clave}/v4":                             "the check takes its options in the query",
	"PUT /api/received/{clave}/v4":                              "the check takes no body",
	"POST " + pathUserToken:                                     "the rotation takes no body",
	"POST " + ConnectionTestPath:                                "the connection test takes no body",
	"POST /api/documents/{clave}/email/v4":                      "the e-mail requeue takes no body",
	"POST " + pipeline.CallbackPath:                             "the tax authority's callback: its body is the tax authority's status, read as it sends it, not a caller's request",
	"DELETE /api/companies/{companyId}/webhooks/{webhookId}/v4": "a removal takes no body",
}

// TestStrictBodyRoutesListed: every route of the service whose method may
// carry a body is either in bodyRoutes or in noBodyRoutes, and neither
// table names a route that does not exist.
func TestStrictBodyRoutesListed(t *testing.T) {
	srv, err := New(Options{Tenants: &fakeTenants{}, Routes: serviceRoutes(t, routeDeps{})})
	if err != nil {
		t.Fatal(err)
	}
	rows := bodyRoutes()
	seen := map[string]bool{}
	for _, rt := range srv.routes {
		key := rt.method + " " + rt.pattern
		seen[key] = true
		_, hasRow := rows[key]
		_, noBody := noBodyRoutes[key]
		switch rt.method {
		case http.MethodGet, http.MethodHead:
			if hasRow || noBody {
				t.Errorf("%s: a %s route in the tables", key, rt.method)
			}
		default:
			if hasRow == noBody {
				t.Errorf("%s: add a row to bodyRoutes (a valid body, its nesting) or say in noBodyRoutes why it reads none", key)
			}
		}
	}
	for _, table := range []map[string]bool{keys(rows), keys(noBodyRoutes)} {
		for key := range table {
			if !seen[key] {
				t.Errorf("%s: listed, but no such route", key)
			}
		}
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// TestStrictBodies: for every route that reads a body, its valid body is
// taken; the same body with a name it does not have, at the top and at
// every level of its nesting, is a 400 naming that name's exact path; and
// a misspelt name gets the field meant suggested.
func TestStrictBodies(t *testing.T) {
	docs := &fakeDocuments{out: (&fakeDerived{}).outcome(strictClave)}
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: slices.Concat(DocumentRoutes(docs, nil, printed.Printer{}), ReceivedRoutes(strictReceived{}, nil, printed.Printer{}),
		WebhookRoutes(strictWebhooks{}), DerivedRoutes(&fakeDerived{}), []Route{CalculateRoute()})})
	for key, row := range bodyRoutes() {
		method, _, _ := strings.Cut(key, " ")
		var encodings []string
		if row.json != nil {
			encodings = append(encodings, "application/json")
		}
		if row.form != nil {
			encodings = append(encodings, "application/x-www-form-urlencoded", "multipart/form-data")
		}
		if row.encodings != nil {
			encodings = row.encodings
		}
		for _, enc := range encodings {
			send := func(t *testing.T, mutate func(body map[string]any)) reply {
				t.Helper()
				ct, body := row.encode(t, enc, mutate)
				return b.do(t, method, row.path, row.creds, ct, body)
			}
			t.Run(key+"/"+enc, func(t *testing.T) {
				t.Run("ok/valid body", func(t *testing.T) {
					if r := send(t, nil); r.status == http.StatusBadRequest {
						t.Fatalf("the valid body is refused: %s", r.body)
					}
				})
				type refusal struct {
					name      string
					at        []any
					key, path string
					msg       string
				}
				isJSON := enc == "application/json"
				cases := []refusal{{"error/unknown at the top", nil, "xyzzy", "xyzzy", msg.UnknownField.With().String()}}
				if !isJSON {
					cases[0].key, cases[0].path = "Xyzzy", "Xyzzy"
				}
				if isJSON {
					for _, n := range row.nested {
						cases = append(cases, refusal{"error/unknown in " + n.path, n.at, "xyzzy", n.path, msg.UnknownField.With().String()})
					}
				}
				s := row.suggest
				if !isJSON && row.formSuggest != nil {
					s = row.formSuggest
				}
				if s != nil {
					cases = append(cases, refusal{"error/suggestion " + s.path, s.at, s.name, s.path, s.msg})
				}
				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						r := send(t, func(body map[string]any) { insertName(t, body, c.at, c.key) })
						errs := requireA7(t, r, http.StatusBadRequest)
						msgs, _ := errs[c.path].([]any)
						if len(msgs) != 1 || msgs[0] != c.msg {
							t.Errorf("errors[%q] = %v, want [%q]; all: %s", c.path, msgs, c.msg, r.body)
						}
					})
				}
			})
		}
	}
}

// encode writes the row's body, changed by mutate, in the encoding enc.
func (row bodyRoute) encode(t *testing.T, enc string, mutate func(map[string]any)) (ct string, body []byte) {
	t.Helper()
	if enc == "application/json" {
		b, err := json.Marshal(row.json) // a fresh copy to change
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(m)
		}
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		return enc, b
	}
	m := map[string]any{}
	for k, v := range row.form {
		m[k] = v
	}
	if mutate != nil {
		mutate(m)
	}
	values := map[string]string{}
	for k, v := range m {
		values[k] = fmt.Sprint(v)
	}
	if enc == "multipart/form-data" {
		return multipartBody(t, values, nil)
	}
	q := url.Values{}
	for k, v := range values {
		q.Set(k, v)
	}
	return enc, []byte(q.Encode())
}

// insertName puts the name key, with a plausible value, in the object of
// body at the place at.
func insertName(t *testing.T, body map[string]any, at []any, key string) {
	t.Helper()
	var cur any = body
	for _, step := range at {
		switch s := step.(type) {
		case string:
			cur = cur.(map[string]any)[s]
		case int:
			cur = cur.([]any)[s]
		}
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("no object at %v", at)
	}
	obj[key] = "1"
}

// strictReceived takes every receive.
type strictReceived struct{}

func (strictReceived) Receive(context.Context, tenant.Principal, *hacienda.ReceiveRequest) (pipeline.ReceivedOutcome, error) {
	rd := tenant.ReceivedDocument{CompanyID: 2, BranchID: 3, IDExterno: "r-1", Clave: strictClave, TipoDocumento: "01",
		EmisorTipo: "02", EmisorNumero: "3101000000", EmisorNombre: "Proveedor S.A.", ReceptorTipo: "02", ReceptorNumero: "3101123456",
		FechaEmision: time.Date(2026, 11, 21, 14, 3, 0, 0, hacienda.CostaRica), TotalComprobante: "1130.5", Mensaje: "1", Tipo: "05",
		Terminal: "00001", Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent}}
	return pipeline.ReceivedOutcome{Received: rd, Answer: pipeline.Answer{Estado: tenant.StateSent}}, nil
}

func (strictReceived) CheckReceived(context.Context, tenant.Principal, string) (pipeline.ReceivedOutcome, error) {
	return pipeline.ReceivedOutcome{}, tenant.ErrNotFound
}

func (strictReceived) Received(context.Context, tenant.Principal, string) (tenant.ReceivedDocument, error) {
	return tenant.ReceivedDocument{}, tenant.ErrNotFound
}

// strictWebhooks takes every webhook.
type strictWebhooks struct{}

func (strictWebhooks) CreateWebhook(_ context.Context, _ tenant.Principal, _ int64, in tenant.WebhookInput) (tenant.Webhook, string, error) {
	return tenant.Webhook{ID: 1, URL: in.URL, Eventos: in.Eventos}, "secreto", nil
}

func (strictWebhooks) Webhooks(context.Context, tenant.Principal, int64) ([]tenant.Webhook, error) {
	return nil, nil
}

func (strictWebhooks) DeleteWebhook(context.Context, tenant.Principal, int64, int64) error {
	return nil
}

func (strictWebhooks) WebhookDeliveries(context.Context, tenant.Principal, int64, int64, tenant.DeliveryPage) ([]tenant.Delivery, error) {
	return nil, nil
}

// openRequestTops are the request bodies whose top object takes names its
// schema does not list: the calculate call takes a whole send body, and a
// re-issue any of the send's fields.
var openRequestTops = map[string]bool{
	"POST /api/documents/calculate/v4":        true,
	"POST /api/documents/{clave}/reemitir/v4": true,
}

// TestOpenAPIRequestsClosed: the OpenAPI says what strict decoding does.
// Every object of every request body (the nested ones too) has
// additionalProperties false, but the tops of openRequestTops, which do
// not.
func TestOpenAPIRequestsClosed(t *testing.T) {
	doc := loadOpenAPI(t)
	seen := map[*openapi3.Schema]bool{}
	var walk func(path string, ref *openapi3.SchemaRef, top, open bool)
	walk = func(path string, ref *openapi3.SchemaRef, top, open bool) {
		if ref == nil || ref.Value == nil {
			return
		}
		s := ref.Value
		if !top {
			if seen[s] {
				return
			}
			seen[s] = true
		}
		if s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0 {
			closed := s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
			switch {
			case top && open && closed:
				t.Errorf("%s: additionalProperties false, but the call takes other names", path)
			case !(top && open) && !closed:
				t.Errorf("%s: a request object without additionalProperties false", path)
			}
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p, false, false)
		}
		walk(path+"[]", s.Items, false, false)
		for _, xs := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
			for _, x := range xs {
				walk(path, x, top, open)
			}
		}
	}
	bodies, opens := 0, 0
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			at := m + " " + p
			for ct, mt := range op.RequestBody.Value.Content {
				bodies++
				if openRequestTops[at] {
					opens++
				}
				walk(at+" "+ct, mt.Schema, true, openRequestTops[at])
			}
		}
	}
	if bodies == 0 || opens != len(openRequestTops) {
		t.Errorf("%d request bodies, %d of openRequestTops found; want some, and all %d", bodies, opens, len(openRequestTops))
	}
}
