package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"facturad/docs/examples"
	"facturad/gateway/openapicheck"
	"facturad/hacienda"
	"facturad/hacienda/api"
)

// The OpenAPI document: valid, every body typed field by field, its code
// enumerations those the service checks, its shapes those the service
// reads and writes, and the examples of docs/examples in it.

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	b, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	c, err := openapicheck.New(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return c.Doc()
}

// TestOpenAPIEverySchemaTyped walks every schema of the document (the
// components and those inline in operations) and fails on an object
// without properties or an additionalProperties schema, an array without
// items, and a schema with neither a type, a reference nor a composition.
func TestOpenAPIEverySchemaTyped(t *testing.T) {
	doc := loadOpenAPI(t)
	seen := map[*openapi3.Schema]bool{}
	var walk func(path string, ref *openapi3.SchemaRef)
	walk = func(path string, ref *openapi3.SchemaRef) {
		if ref == nil {
			return
		}
		s := ref.Value
		if s == nil {
			t.Errorf("%s: unresolved reference %q", path, ref.Ref)
			return
		}
		if seen[s] {
			return
		}
		seen[s] = true
		composed := len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) > 0
		switch {
		case s.Type == nil || len(*s.Type) == 0:
			if !composed {
				t.Errorf("%s: a schema with no type", path)
			}
		case s.Type.Is(openapi3.TypeObject):
			hasAdditional := s.AdditionalProperties.Schema != nil
			if len(s.Properties) == 0 && !hasAdditional {
				t.Errorf("%s: an object without properties", path)
			}
		case s.Type.Is(openapi3.TypeArray):
			if s.Items == nil {
				t.Errorf("%s: an array without items", path)
			}
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		walk(path+"[]", s.Items)
		walk(path+"{}", s.AdditionalProperties.Schema)
		for i, x := range s.OneOf {
			walk(fmt.Sprintf("%s/oneOf[%d]", path, i), x)
		}
		for i, x := range s.AnyOf {
			walk(fmt.Sprintf("%s/anyOf[%d]", path, i), x)
		}
		for i, x := range s.AllOf {
			walk(fmt.Sprintf("%s/allOf[%d]", path, i), x)
		}
	}
	for name, s := range doc.Components.Schemas {
		walk("#/components/schemas/"+name, s)
	}
	bodies := 0
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			at := m + " " + p
			for _, prm := range append(item.Parameters, op.Parameters...) {
				walk(at+" parameter "+prm.Value.Name, prm.Value.Schema)
			}
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					bodies++
					walk(at+" request "+ct, mt.Schema)
				}
			}
			for code, r := range op.Responses.Map() {
				for ct, mt := range r.Value.Content {
					bodies++
					walk(at+" "+code+" "+ct, mt.Schema)
				}
				for h, hr := range r.Value.Headers {
					walk(at+" "+code+" header "+h, hr.Value.Schema)
				}
			}
		}
	}
	if bodies < 50 {
		t.Errorf("walked only %d bodies: the walk misses the operations", bodies)
	}
}

// TestOpenAPICodeLists: each code list appears once in the document, as
// the component <List>Code, with exactly the codes the service accepts.
func TestOpenAPICodeLists(t *testing.T) {
	doc := loadOpenAPI(t)
	for name, want := range hacienda.CodeLists() {
		t.Run(string(name), func(t *testing.T) {
			comp := string(unicode.ToUpper(rune(name[0]))) + string(name[1:]) + "Code"
			s := doc.Components.Schemas[comp]
			if s == nil {
				t.Fatalf("no component %s", comp)
			}
			var got []string
			for _, v := range s.Value.Enum {
				got = append(got, fmt.Sprint(v))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s enumerates %v, the service accepts %v", comp, got, want)
			}
		})
	}
}

// modelFields returns the JSON names of a struct type's fields, embedded
// structs flattened.
func modelFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			out = append(out, modelFields(f.Type)...)
		case name == "-" || !f.IsExported():
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// nullFields returns the JSON names of a struct type's fields that
// encoding/json writes as null when unset (slices, maps and pointers
// without omitempty), embedded structs flattened.
func nullFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch k := f.Type.Kind(); {
		case f.Anonymous && name == "":
			out = append(out, nullFields(f.Type)...)
		case name == "-" || !f.IsExported() || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"):
		case k == reflect.Slice || k == reflect.Map || k == reflect.Pointer:
			if name == "" {
				name = f.Name
			}
			out = append(out, name)
		}
	}
	return out
}

// alwaysWritten returns the JSON names of a struct type's fields that
// encoding/json always writes (no omitempty), embedded structs flattened.
func alwaysWritten(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			out = append(out, alwaysWritten(f.Type)...)
		case name == "-" || !f.IsExported() || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"):
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	return out
}

// objectShape returns the properties and required names of an object
// schema with what it is composed of (allOf members; for a string-or-object
// oneOf, the object).
func objectShape(s *openapi3.Schema) (map[string]*openapi3.SchemaRef, []string) {
	props := map[string]*openapi3.SchemaRef{}
	var required []string
	var add func(s *openapi3.Schema)
	add = func(s *openapi3.Schema) {
		for k, v := range s.Properties {
			props[k] = v
		}
		required = append(required, s.Required...)
		for _, m := range s.AllOf {
			add(m.Value)
		}
		if s.Properties == nil {
			for _, alt := range s.OneOf {
				if alt.Value.Properties != nil {
					add(alt.Value)
				}
			}
		}
	}
	add(s)
	return props, required
}

// TestOpenAPIShapesMatchTheModel holds every described body to the Go type
// the service decodes or encodes: an answer's schema has exactly the
// type's fields; a request's has every field the service reads (the
// computed ones, ignored on input, aside) and no other but the accepted
// older spellings.
func TestOpenAPIShapesMatchTheModel(t *testing.T) {
	doc := loadOpenAPI(t)
	totals := []string{"totalServGravados", "totalServExentos", "totalServExonerado", "totalServNoSujeto",
		"totalMercanciasGravadas", "totalMercanciasExentas", "totalMercExonerada", "totalMercNoSujeta", "totalGravado",
		"totalExento", "totalExonerado", "totalNoSujeto", "totalVenta", "totalDescuentos", "totalVentaNeta",
		"totalDesgloseImpuesto", "totalImpuesto", "totalImpAsumEmisorFabrica", "totalIVADevuelto", "totalOtrosCargos",
		"totalComprobante"}
	type shape struct {
		schema     string
		model      any
		goOnly     []string // computed by the service: not read on input
		schemaOnly []string // accepted older spellings
		answer     bool     // an answer: the service writes empty lists, not null
	}
	tests := []shape{
		{"SendDocumentRequest", hacienda.SendDocumentRequest{}, nil, nil, false},
		{"CalculateRequest", hacienda.CalculateRequest{}, nil, nil, false},
		{"Receptor", hacienda.ReceptorRequest{}, nil, nil, false},
		{"Identificacion", hacienda.IdentificacionRequest{}, nil, nil, false},
		{"Ubicacion", hacienda.Ubicacion{}, nil, nil, false},
		{"Telefono", hacienda.Telefono{}, nil, nil, false},
		{"LineaDetalle", hacienda.LineaDetalle{}, []string{"impuestoAsumidoEmisorFabrica", "impuestoNeto", "montoTotalLinea"}, nil, false},
		{"CodigoComercial", hacienda.CodigoComercial{}, nil, nil, false},
		{"Descuento", hacienda.Descuento{}, nil, nil, false},
		{"Impuesto", hacienda.Impuesto{}, []string{"monto"}, nil, false},
		{"DatosImpuestoEspecifico", hacienda.DatosImpuestoEspecifico{}, nil, nil, false},
		{"Exoneracion", hacienda.Exoneracion{}, []string{"montoExoneracion"}, nil, false},
		{"LineaDetalleSurtido", hacienda.LineaDetalleSurtido{}, nil, nil, false},
		{"DescuentoSurtido", hacienda.DescuentoSurtido{}, nil, nil, false},
		{"ImpuestoSurtido", hacienda.ImpuestoSurtido{}, nil, nil, false},
		{"DatosImpuestoEspecificoSurtido", hacienda.DatosImpuestoEspecificoSurtido{}, nil, nil, false},
		{"OtroCargo", hacienda.OtroCargo{}, nil, nil, false},
		{"ResumenFactura", hacienda.ResumenFactura{}, totals, nil, false},
		{"CodigoTipoMoneda", hacienda.CodigoTipoMoneda{}, nil, nil, false},
		{"MedioPago", hacienda.MedioPago{}, nil, nil, false},
		{"InformacionReferencia", hacienda.InformacionReferencia{}, nil, []string{"tipoDoc", "fechaEmision"}, false},
		{"Otros", hacienda.Otros{}, nil, nil, false},
		{"OtroTexto", hacienda.OtroTexto{}, nil, nil, false},
		// Answers.
		{"Document", api.Document{}, nil, nil, true},
		{"AmountsCalculateDocumentResponse", hacienda.AmountsCalculateDocumentResponse{}, nil, nil, true},
		{"LineaCalculada", hacienda.CalculatedLine{}, nil, nil, true},
		{"DescuentoCalculado", hacienda.CalculatedDescuento{}, nil, nil, true},
		{"ImpuestoCalculado", hacienda.CalculatedImpuesto{}, nil, nil, true},
		{"ExoneracionCalculada", hacienda.Exoneracion{}, nil, nil, true},
		{"DatosImpuestoEspecificoCalculado", hacienda.DatosImpuestoEspecifico{}, nil, nil, true},
		{"OtroCargoCalculado", hacienda.OtroCargo{}, nil, nil, true},
		{"IdentificacionCalculada", hacienda.Identificacion{}, nil, nil, true},
		{"ResumenCalculado", hacienda.CalculatedResumen{}, nil, nil, true},
		{"CodigoTipoMonedaCalculado", hacienda.CodigoTipoMoneda{}, nil, nil, true},
		{"TotalDesgloseImpuesto", hacienda.TotalDesgloseImpuesto{}, nil, nil, true},
		{"MedioPagoCalculado", hacienda.CalculatedMedioPago{}, nil, nil, true},
		{"Contribuyente", api.Contribuyente{}, nil, nil, true},
		{"Regimen", api.Regimen{}, nil, nil, true},
		{"Situacion", api.Situacion{}, nil, nil, true},
		{"Actividad", api.Actividad{}, nil, nil, true},
		{"CabysList", api.CabysList{}, nil, nil, true},
		{"Cabys", api.Cabys{}, nil, nil, true},
		{"ExoneracionRegistro", api.Exoneracion{}, nil, nil, true},
		{"CodigoDescripcion", api.CodeNombre{}, nil, nil, true},
		{"TipoCambio", api.TipoCambio{}, nil, nil, true},
		{"CompanySearch", api.Company{}, nil, nil, true},
		{"Company", api.CompanyDetail{}, nil, nil, true},
		{"UpdateCompanyResponse", api.UpdatedCompany{}, nil, nil, true},
		{"CreateCompanyResponse", api.CreatedCompany{}, nil, nil, true},
		{"Branch", api.Branch{}, nil, nil, true},
		{"CreateBranchResponse", api.CreatedBranch{}, nil, nil, true},
		{"UpdateBranchResponse", api.UpdatedBranch{}, nil, nil, true},
		{"Credentials", api.Credentials{}, nil, nil, true},
		{"APIUser", api.APIUser{}, nil, nil, true},
		{"ReceivedDocument", api.ReceivedDocument{}, nil, nil, true},
		{"DocumentList", api.Page[api.Document]{}, nil, nil, true},
		{"ReceivedDocumentList", api.Page[api.ReceivedDocument]{}, nil, nil, true},
		// Delivery (A.12).
		{"WebhookRequest", api.WebhookRequest{}, nil, nil, false},
		// Tenancy requests (the company form and the branch body:
		// TestOpenAPITenancyRequests).
		{"UserRequest", api.UserRequest{}, nil, nil, false},
		{"APIUserUpdate", api.APIUserUpdate{}, nil, nil, false},
		{"Webhook", api.Webhook{}, nil, nil, true},
		{"WebhookCreated", api.WebhookCreated{}, nil, nil, true},
		{"Delivery", api.Delivery{}, nil, nil, true},
		{"DeliveryLog", api.Page[api.Delivery]{}, nil, nil, true},
		// The audit log (A.14).
		{"AuditEntry", api.AuditEntry{}, nil, nil, true},
		{"AuditUser", api.AuditUser{}, nil, nil, true},
		{"AuditLog", api.Page[api.AuditEntry]{}, nil, nil, true},
		{"DocumentEmail", api.DocumentEmail{}, nil, nil, true},
		{"EmailRejection", api.EmailRejection{}, nil, nil, true},
		// Tenants over time (A.14).
		{"PruebaConexion", api.PruebaConexion{}, nil, nil, true},
	}
	// filled are the fields the Go type may leave out that the service
	// fills in every answer: calcCurrency sets tipoCambio 1 for colones and
	// refuses a foreign currency without one.
	filled := map[string][]string{"CodigoTipoMonedaCalculado": {"tipoCambio"}}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			ref := doc.Components.Schemas[tt.schema]
			if ref == nil {
				t.Fatalf("no component %s", tt.schema)
			}
			props, required := objectShape(ref.Value)
			var described []string
			for name := range props {
				described = append(described, name)
			}
			sort.Strings(described)
			model := modelFields(reflect.TypeOf(tt.model))
			for _, f := range model {
				if !slices.Contains(described, f) && !slices.Contains(tt.goOnly, f) {
					t.Errorf("%s does not describe field %s", tt.schema, f)
				}
			}
			for _, f := range described {
				if !slices.Contains(model, f) && !slices.Contains(tt.schemaOnly, f) {
					t.Errorf("%s describes %s, which the service neither reads nor writes", tt.schema, f)
				}
			}
			for _, f := range tt.goOnly {
				if slices.Contains(described, f) {
					t.Errorf("%s describes %s, which the service computes", tt.schema, f)
				}
			}
			if tt.answer {
				// What the service always writes is required, and only
				// that.
				always := alwaysWritten(reflect.TypeOf(tt.model))
				for _, f := range always {
					if !slices.Contains(required, f) {
						t.Errorf("%s: the service always writes %s, which the document does not require", tt.schema, f)
					}
				}
				for _, f := range required {
					if !slices.Contains(always, f) && !slices.Contains(filled[tt.schema], f) {
						t.Errorf("%s requires %s, which the service leaves out when empty", tt.schema, f)
					}
				}
				return
			}
			// What a Go program (the Go client) writes as null in a
			// request must be allowed to be null. (The service writes
			// empty lists, not null, in its answers.)
			for _, f := range nullFields(reflect.TypeOf(tt.model)) {
				if p := props[f]; p != nil && !p.Value.Nullable {
					t.Errorf("%s.%s is written as null when unset, and the document does not allow null", tt.schema, f)
				}
			}
		})
	}
}

// TestOpenAPIExamples: the send and calculate calls' examples are the
// files of docs/examples, each validating against the request's schema
// (the document's own validation checks them too; this names the file
// that fails). No placeholder is served: where a file refers to another
// example's document, the served example holds a well-formed sample clave
// and its date, and its description says what to put there instead.
func TestOpenAPIExamples(t *testing.T) {
	doc := loadOpenAPI(t)
	all, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 9 {
		t.Fatalf("%d examples", len(all))
	}
	served, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(served, []byte("{{")) {
		t.Error("the served document holds a {{placeholder}}")
	}
	for _, path := range []string{"/api/documents/v4", "/api/documents/calculate/v4"} {
		mt := doc.Paths.Value(path).Post.RequestBody.Value.Content.Get("application/json")
		if len(mt.Examples) != len(all) {
			t.Errorf("%s: %d examples in the document, %d files", path, len(mt.Examples), len(all))
		}
		types := map[string]bool{}
		for _, ex := range all {
			t.Run(path+"/"+ex.Name, func(t *testing.T) {
				in := mt.Examples[ex.Name]
				if in == nil {
					t.Fatal("not in the document")
				}
				v, ok := in.Value.Value.(map[string]any)
				if !ok {
					t.Fatalf("not an object: %v", in.Value.Value)
				}
				types[fmt.Sprint(v["tipo_documento"])] = true
				// The file with each placeholder replaced by what was
				// served there.
				claves := map[string]string{}
				refs, _ := v["informacionReferencia"].([]any)
				for i, need := range ex.Needs {
					if i >= len(refs) {
						t.Fatalf("needs %s, serves %d references", need, len(refs))
					}
					ref := refs[i].(map[string]any)
					claves[need] = fmt.Sprint(ref["numero"])
					if !regexp.MustCompile(`^506[0-9]{47}$`).MatchString(claves[need]) {
						t.Errorf("sample clave %q", claves[need])
					}
					if !strings.Contains(in.Value.Description, need) || !strings.Contains(in.Value.Description, "in their place") {
						t.Errorf("the description does not say what to put in place of %s's sample: %q", need, in.Value.Description)
					}
				}
				filled, err := examples.Fill(ex.Body, claves)
				if err != nil {
					t.Fatal(err)
				}
				var want map[string]any
				if err := json.Unmarshal(filled, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(v, want) {
					t.Fatalf("the document's example is not the file")
				}
				if err := mt.Schema.Value.VisitJSON(v); err != nil {
					t.Errorf("does not validate: %v", err)
				}
			})
		}
		for _, tipo := range hacienda.DocumentTypes {
			if !types[string(tipo)] {
				t.Errorf("%s: no example of document type %s", path, tipo)
			}
		}
	}
}

// TestOpenAPIRejectsWhatTheServiceRejects: the schema is not so loose
// that anything passes.
func TestOpenAPIRejectsWhatTheServiceRejects(t *testing.T) {
	doc := loadOpenAPI(t)
	schema := doc.Components.Schemas["SendDocumentRequest"].Value
	tests := []struct {
		name string
		body string
	}{
		{"error/unknown document type", `{"id_externo":"x","tipo_documento":"05"}`},
		{"error/unknown tax code", `{"id_externo":"x","tipo_documento":"01","detalleServicio":[{"detalle":"abc","impuesto":[{"codigo":"09"}]}]}`},
		{"error/reference without tipoDocIR", `{"id_externo":"x","tipo_documento":"03","informacionReferencia":[{"numero":"1","fechaEmisionIR":"2026-11-21T14:03:00"}]}`},
		{"error/object where a list goes", `{"id_externo":"x","tipo_documento":"01","detalleServicio":{"detalle":"abc"}}`},
		{"error/unknown currency", `{"id_externo":"x","tipo_documento":"01","resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"XXX"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.body), &v); err != nil {
				t.Fatal(err)
			}
			if err := schema.VisitJSON(v); err == nil {
				t.Error("validates")
			}
		})
	}
}

// TestOpenAPIEveryFieldDescribed: every property of every schema, in the
// components and inline in the operations, says what it is (a property
// that is only a reference takes its component's description), and the
// tenancy request bodies say which fields they require.
func TestOpenAPIEveryFieldDescribed(t *testing.T) {
	doc := loadOpenAPI(t)
	seen := map[*openapi3.Schema]bool{}
	var walk func(path string, ref *openapi3.SchemaRef)
	walk = func(path string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		for name, p := range s.Properties {
			if p.Value != nil && strings.TrimSpace(p.Value.Description) == "" {
				t.Errorf("%s.%s has no description", path, name)
			}
			walk(path+"."+name, p)
		}
		walk(path+"[]", s.Items)
		walk(path+"{}", s.AdditionalProperties.Schema)
		for _, list := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for _, x := range list {
				walk(path, x)
			}
		}
	}
	for name, s := range doc.Components.Schemas {
		walk(name, s)
	}
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					walk(m+" "+p+" "+ct, mt.Schema)
				}
			}
			for code, r := range op.Responses.Map() {
				for ct, mt := range r.Value.Content {
					walk(m+" "+p+" "+code+" "+ct, mt.Schema)
				}
			}
		}
	}
	for name, want := range map[string][]string{
		"CompanyForm": {"TipoIdentificacion", "Identificacion", "RazonSocial", "Provincia", "Canton", "Distrito", "OtrasSenas", "CorreoElectronico"},
		"BranchInput": {"sucursal"},
		"UserRequest": {"usuario"},
	} {
		if got := doc.Components.Schemas[name].Value.Required; !slices.Equal(got, want) {
			t.Errorf("%s requires %v, the service %v", name, got, want)
		}
	}
}

// TestOpenAPITenancyRequests: the company form and the branch body name
// exactly the fields the service reads (api.CompanyForm and
// api.BranchInput, under their form and JSON names, and the older
// spellings it accepts).
func TestOpenAPITenancyRequests(t *testing.T) {
	doc := loadOpenAPI(t)
	// names are the names the decoders of hacienda/api read for a body
	// type: each field's under its json tag (form: its form tag, else its
	// Go name; "-" is none), and its also tag's older spellings.
	names := func(ty reflect.Type, form bool) []string {
		var out []string
		for i := range ty.NumField() {
			f := ty.Field(i)
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if form {
				if n = f.Tag.Get("form"); n == "" {
					n = f.Name
				}
			}
			if n == "" || n == "-" {
				continue
			}
			out = append(out, n)
			out = append(out, strings.Fields(f.Tag.Get("also"))...)
		}
		sort.Strings(out)
		return out
	}
	for _, tt := range []struct {
		schema string
		want   []string
	}{
		{"CompanyForm", names(reflect.TypeOf(api.CompanyForm{}), true)},
		{"BranchInput", names(reflect.TypeOf(api.BranchInput{}), false)},
	} {
		var got []string
		for n := range doc.Components.Schemas[tt.schema].Value.Properties {
			got = append(got, n)
		}
		sort.Strings(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s names %v\nthe service reads %v", tt.schema, got, tt.want)
		}
	}
}

// TestOpenAPICodeFieldsReferTheirList: the fields of an assortment's
// component (LineaDetalleSurtido, ImpuestoSurtido, DescuentoSurtido) refer
// to the same code lists as their twins in a line (LineaDetalle, Impuesto,
// Descuento), as the v4.4 schema types them.
func TestOpenAPICodeFieldsReferTheirList(t *testing.T) {
	doc := loadOpenAPI(t)
	// codeList is the *Code component a property refers to, directly or
	// through an allOf or anyOf.
	codeList := func(ref *openapi3.SchemaRef) string {
		refs := []*openapi3.SchemaRef{ref}
		refs = append(refs, ref.Value.AllOf...)
		refs = append(refs, ref.Value.AnyOf...)
		for _, r := range refs {
			if name := strings.TrimPrefix(r.Ref, "#/components/schemas/"); strings.HasSuffix(name, "Code") {
				return name
			}
		}
		return ""
	}
	pairs := 0
	for comp, s := range doc.Components.Schemas {
		twinName, ok := strings.CutSuffix(comp, "Surtido")
		if !ok {
			continue
		}
		twin := doc.Components.Schemas[twinName]
		if twin == nil {
			t.Errorf("%s has no twin %s", comp, twinName)
			continue
		}
		for name, p := range twin.Value.Properties {
			list := codeList(p)
			if list == "" {
				continue
			}
			// unidadMedida → unidadMedidaSurtido; Impuesto's codigo →
			// codigoImpuestoSurtido.
			sp := s.Value.Properties[name+"Surtido"]
			if sp == nil {
				sp = s.Value.Properties[name+twinName+"Surtido"]
			}
			if sp == nil {
				continue
			}
			pairs++
			if got := codeList(sp); got != list {
				t.Errorf("%s's twin of %s.%s refers to %q, not %s", comp, twinName, name, got, list)
			}
		}
	}
	if pairs < 5 {
		t.Errorf("only %d surtido twins found", pairs)
	}
}

// TestOpenAPITenancyExamplesAccepted sends the company form's, the
// branch body's and the user body's examples, as they stand, to the
// gateway over the real tenant service: each is accepted (and, as every
// call of these tests, agrees with the document).
func TestOpenAPITenancyExamplesAccepted(t *testing.T) {
	doc := loadOpenAPI(t)
	example := func(name string) map[string]any {
		v, ok := doc.Components.Schemas[name].Value.Example.(map[string]any)
		if !ok {
			t.Fatalf("%s has no example", name)
		}
		return v
	}
	w := newWorld(t)
	form := map[string]string{}
	for k, v := range example("CompanyForm") {
		form[k] = fmt.Sprint(v)
	}
	ct, body := multipartBody(t, form, nil)
	r := w.do(t, "POST", "/api/companies/v4", &w.admin, ct, body)
	if r.status != 200 {
		t.Fatalf("the company form's example: %d %s", r.status, r.body)
	}
	company := r.object(t)
	owner := creds{token: company["apiToken"].(string), user: company["usuario"].(string), pass: company["contrasena"].(string)}
	branchBody, err := json.Marshal(example("BranchInput"))
	if err != nil {
		t.Fatal(err)
	}
	r = w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/v4", num(company["companiaId"])), &owner, "application/json", branchBody)
	if r.status != 200 {
		t.Fatalf("the branch body's example: %d %s", r.status, r.body)
	}
	branch := r.object(t)
	userBody, err := json.Marshal(example("UserRequest"))
	if err != nil {
		t.Fatal(err)
	}
	r = w.do(t, "POST", fmt.Sprintf("/api/companies/%d/branches/%d/users/v4", num(company["companiaId"]), num(branch["id"])), &owner, "application/json", userBody)
	if r.status != 200 {
		t.Fatalf("the user body's example: %d %s", r.status, r.body)
	}
}

// TestOpenAPIAuthenticatedRefusals: every operation that needs
// credentials lists what authentication can answer on any route (401
// wrong credentials, 429 backing off after failures, 503 too busy to
// check them) and 500, the 429 and 503 in the A.7 form with their
// Retry-After, as the shared components.responses entries give them.
func TestOpenAPIAuthenticatedRefusals(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, name := range []string{"TooManyRequests", "Unavailable"} {
		if doc.Components.Responses[name] == nil {
			t.Errorf("no components.responses.%s", name)
		}
	}
	ops := 0
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			if len(security) == 0 {
				continue
			}
			ops++
			at := m + " " + p
			for _, code := range []string{"401", "429", "500", "503"} {
				r := op.Responses.Value(code)
				if r == nil || r.Value == nil {
					t.Errorf("%s does not list %s", at, code)
					continue
				}
				if code != "429" && code != "503" {
					continue
				}
				mt := r.Value.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
					t.Errorf("%s %s: the body is not the A.7 Error", at, code)
				}
				h := r.Value.Headers["Retry-After"]
				if h == nil || h.Value == nil || !h.Value.Required || h.Value.Schema == nil || !h.Value.Schema.Value.Type.Is(openapi3.TypeInteger) {
					t.Errorf("%s %s: no required integer Retry-After header", at, code)
				}
			}
			if r := op.Responses.Value("429"); r != nil && r.Ref != "#/components/responses/TooManyRequests" {
				t.Errorf("%s 429 is %q, not the shared TooManyRequests", at, r.Ref)
			}
		}
	}
	if ops < 30 {
		t.Errorf("only %d authenticated operations found", ops)
	}
}

// TestDocsPageListsEveryOperation: the human page at /docs names every
// operation of the OpenAPI document by its method and path, with the same
// path parameter names, so that a route added to one is added to both.
func TestDocsPageListsEveryOperation(t *testing.T) {
	doc := loadOpenAPI(t)
	page := string(docsHTML)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`<code>(GET|POST|PUT|DELETE) (/[^<?]*)`).FindAllStringSubmatch(page, -1) {
		listed[m[1]+" "+m[2]] = true
	}
	described := map[string]bool{}
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			described[m+" "+p] = true
			if !listed[m+" "+p] {
				t.Errorf("/docs does not list %s %s", m, p)
			}
		}
	}
	for op := range listed {
		if !described[op] {
			t.Errorf("/docs lists %s, which the OpenAPI document does not describe", op)
		}
	}
}
