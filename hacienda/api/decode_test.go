package api

import (
	"bytes"
	"errors"
	"facturad/hacienda/msg"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fieldsOf returns the fields a decoder refused, nil for none.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("not a *FieldError: %v", err)
	}
	var out []string
	for f := range fe.FieldErrors() {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

func TestDecodeBranchInput(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   BranchInput
		fields []string
	}{
		{"ok/names in any case, a number as text, null as empty", `{"SUCURSAL":"002","Telefono":22223333,"barrio":null}`,
			BranchInput{Sucursal: "002", Telefono: "22223333"}, nil},
		{"ok/the older spelling", `{"MonedaIdLocal":"USD","monedaIdExtranjera":"EUR"}`,
			BranchInput{MonedaLocal: "USD", MonedaExtranjera: "EUR"}, nil},
		{"error/the field and its older spelling", `{"monedaIdLocal":"USD","monedaLocal":"CRC"}`, BranchInput{}, []string{"monedaLocal"}},
		{"error/one name in two cases", `{"sucursal":"002","Sucursal":"003"}`, BranchInput{}, []string{"sucursal"}},
		{"error/one name twice", `{"sucursal":"002","sucursal":"003"}`, BranchInput{}, []string{"sucursal"}},
		{"error/an unknown name", `{"sucursal":"002","razonComercal":"x","xyzzy":1}`, BranchInput{}, []string{"razonComercal", "xyzzy"}},
		{"error/a field of the answer", `{"sucursal":"002","id":7,"createdAt":"2026-01-01T00:00:00"}`, BranchInput{}, []string{"createdAt", "id"}},
		{"ok/flags as booleans and words", `{"activo":false,"verMonedaExtranjera":"si"}`,
			BranchInput{Activo: "N", VerMonedaExtranjera: "S"}, nil},
		{"error/a flag that is neither", `{"activo":"tal vez"}`, BranchInput{}, []string{"activo"}},
		{"error/an object for a string", `{"sucursal":{},"fax":[1]}`, BranchInput{}, []string{"fax", "sucursal"}},
		{"error/not an object", `[]`, BranchInput{}, []string{"body"}},
		{"error/empty", ``, BranchInput{}, []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeBranchInput([]byte(tt.body))
			if f := fieldsOf(t, err); !slices.Equal(f, tt.fields) {
				t.Fatalf("refused %v (%v), want %v", f, err, tt.fields)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeWebhookRequest(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   WebhookRequest
		fields []string
	}{
		{"ok", `{"URL":"https://example.com/h","eventos":["documento.aceptado"]}`,
			WebhookRequest{URL: "https://example.com/h", Eventos: []string{"documento.aceptado"}}, nil},
		{"ok/nothing", `{}`, WebhookRequest{}, nil},
		{"error/a number for the url", `{"url":5}`, WebhookRequest{}, []string{"url"}},
		{"error/a string for the events", `{"eventos":"documento.aceptado"}`, WebhookRequest{}, []string{"eventos"}},
		{"error/an unknown name", `{"url":"https://example.com/h","evento":["documento.aceptado"]}`, WebhookRequest{}, []string{"evento"}},
		{"error/the secret", `{"url":"https://example.com/h","secreto":"x"}`, WebhookRequest{}, []string{"secreto"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeWebhookRequest([]byte(tt.body))
			if f := fieldsOf(t, err); !slices.Equal(f, tt.fields) {
				t.Fatalf("refused %v (%v), want %v", f, err, tt.fields)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCompanyForm: a form the client encodes is read back as it was, and
// the service's readings of other forms.
func TestCompanyForm(t *testing.T) {
	f := CompanyForm{TipoIdentificacion: "02", Identificacion: "3101123456", RazonSocial: "Ejemplo S.A.", MonedaLocal: "CRC",
		FacturacionElectronica: true, Activo: "S", Certificado: []byte("p12 bytes"), Clave: "1234"}
	empty, warn := "", "warn"
	// validacionesRegistro: absent, sent empty and sent with a value are
	// three readings.
	for _, v := range []*string{nil, &empty, &warn} {
		f.ValidacionesRegistro = v
		ct, body, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if sent := bytes.Contains(body, []byte(`name="validacionesRegistro"`)); sent != (v != nil) {
			t.Errorf("validacionesRegistro %v: sent %v", v, sent)
		}
		got, err := DecodeCompanyForm(ct, body)
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("read back %+v, %v\nwant %+v", got, err, f)
		}
	}

	// The printed documents' fields: a logo beside the certificate, notes
	// sent empty or with lines, the logo's removal.
	notes := "Cuenta IBAN CR05015202001026284066\nSINPE Móvil 8888-8888"
	for _, g := range []CompanyForm{
		{RazonSocial: "Con logo S.A.", Certificado: []byte("p12 bytes"), Clave: "1234", Logo: []byte("\x89PNG logo bytes"), NotasImpresas: &notes},
		{RazonSocial: "Sin certificado S.A.", Logo: []byte("\xff\xd8\xff jpeg bytes"), NotasImpresas: &empty},
		{RazonSocial: "Sin logo S.A.", QuitarLogo: "S"},
	} {
		ct, body, err := g.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeCompanyForm(ct, body)
		if err != nil || !reflect.DeepEqual(got, g) {
			t.Errorf("read back %+v, %v\nwant %+v", got, err, g)
		}
	}

	tests := []struct {
		name   string
		ct     string
		body   string
		want   CompanyForm
		fields []string
	}{
		{"ok/quitarLogo as a flag", "application/x-www-form-urlencoded", "QUITARLOGO=si",
			CompanyForm{QuitarLogo: "S"}, nil},
		{"error/text for the logo", "application/x-www-form-urlencoded", "logo=abc", CompanyForm{}, []string{"logo"}},
		{"ok/URL-encoded, older spellings, any case", "application/x-www-form-urlencoded",
			"numeroidentificacion=3101123456&MonedaIdExtranjera=EUR&facturacionElectronica=S&ACTIVO=no",
			CompanyForm{Identificacion: "3101123456", MonedaExtranjera: "EUR", FacturacionElectronica: true, Activo: "N"}, nil},
		{"ok/validacionesRegistro absent", "application/x-www-form-urlencoded", "RazonSocial=x",
			CompanyForm{RazonSocial: "x"}, nil},
		{"ok/validacionesRegistro empty, any case", "application/x-www-form-urlencoded", "VALIDACIONESREGISTRO=",
			CompanyForm{ValidacionesRegistro: &empty}, nil},
		{"ok/validacionesRegistro as sent (the service checks it)", "application/x-www-form-urlencoded", "validacionesregistro=+Warn",
			CompanyForm{ValidacionesRegistro: ptr(" Warn")}, nil},
		{"error/text for the certificate", "application/x-www-form-urlencoded", "Certificado=abc", CompanyForm{}, []string{"Certificado"}},
		{"error/an unknown name", "application/x-www-form-urlencoded", "RazonSocial=x&RazonSocail=y", CompanyForm{}, []string{"RazonSocail"}},
		{"error/one name in two cases", "application/x-www-form-urlencoded", "RazonSocial=x&razonsocial=y", CompanyForm{}, []string{"RazonSocial"}},
		{"error/one name twice", "application/x-www-form-urlencoded", "RazonSocial=x&RazonSocial=y", CompanyForm{}, []string{"RazonSocial"}},
		{"error/one name twice, multipart", multipartCT, multipartText("RazonSocial", "x") + multipartText("RazonSocial", "y") + "--XX--\r\n",
			CompanyForm{}, []string{"RazonSocial"}},
		{"error/one file twice", multipartCT, strings.TrimSuffix(multipartFile("Certificado"), "--XX--\r\n") + multipartFile("Certificado"),
			CompanyForm{}, []string{"Certificado"}},
		{"error/an empty logo file", multipartCT, emptyFile("logo", "logo.png"), CompanyForm{}, []string{"logo"}},
		{"error/an empty certificate file", multipartCT, emptyFile("Certificado", "c.p12"), CompanyForm{}, []string{"Certificado"}},
		{"ok/no file chosen (a browser's empty part without a file name)", multipartCT,
			multipartText("RazonSocial", "x") + emptyFile("Certificado", ""), CompanyForm{RazonSocial: "x"}, nil},
		{"error/one name as text and as a file", multipartCT, multipartText("logo", "") + multipartFile("logo"), CompanyForm{}, []string{"logo"}},
		{"error/the field and its older spelling", "application/x-www-form-urlencoded", "Identificacion=1&NumeroIdentificacion=2",
			CompanyForm{}, []string{"Identificacion"}},
		{"error/a field of the answer", "application/x-www-form-urlencoded", "RazonSocial=x&certificadoVencido=false", CompanyForm{}, []string{"certificadoVencido"}},
		{"error/a file under an unknown name", multipartCT, multipartFile("Certificate"), CompanyForm{}, []string{"Certificate"}},
		{"error/a file for a text field", multipartCT, multipartFile("notasImpresas"), CompanyForm{}, []string{"notasImpresas"}},
		{"error/a file for the PIN, any case", multipartCT, multipartFile("clave"), CompanyForm{}, []string{"Clave"}},
		{"error/a file for a flag", multipartCT, multipartFile("Activo"), CompanyForm{}, []string{"Activo"}},
		{"error/a file for an older spelling", multipartCT, multipartFile("NumeroIdentificacion"), CompanyForm{}, []string{"Identificacion"}},
		{"error/JSON", "application/json", `{"RazonSocial":"x"}`, CompanyForm{}, []string{"body"}},
		{"error/multipart without a boundary", "multipart/form-data", "x", CompanyForm{}, []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCompanyForm(tt.ct, []byte(tt.body))
			if f := fieldsOf(t, err); !slices.Equal(f, tt.fields) {
				t.Fatalf("refused %v (%v), want %v", f, err, tt.fields)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

const multipartCT = "multipart/form-data; boundary=XX"

// multipartFile is a multipart body (boundary XX) holding one file under
// name.
func multipartFile(name string) string {
	return "--XX\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"c.p12\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\np12\r\n--XX--\r\n"
}

// multipartText is a part (boundary XX) holding the text value v under
// name, without the body's closing boundary.
func multipartText(name, v string) string {
	return "--XX\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + v + "\r\n"
}

// emptyFile is a multipart body (boundary XX) ending in an empty file
// part under name, of file name filename ("": a browser's file input left
// empty).
func emptyFile(name, filename string) string {
	return "--XX\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"" + filename + "\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n\r\n--XX--\r\n"
}

// TestDecodeMessages: the messages of the names refused.
func TestDecodeMessages(t *testing.T) {
	for _, tt := range []struct {
		name   string
		decode func() error
		field  string
		want   string
	}{
		{"error/a close name", calls(DecodeBranchInput, `{"razonComercal":"x"}`),
			"razonComercal", "is not a field of this call; did you mean razonComercial?"},
		{"error/an older spelling misspelt", calls(DecodeBranchInput, `{"monedaIdLocl":"x"}`),
			"monedaIdLocl", "is not a field of this call; did you mean monedaLocal?"},
		{"error/no close name", calls(DecodeUserRequest, `{"usuario":"a","xyzzy":1}`),
			"xyzzy", "is not a field of this call"},
		{"error/a generated secret", calls(DecodeUserRequest, `{"usuario":"a","contrasena":"x"}`),
			"contrasena", "is set by the service and cannot be sent; leave it out"},
		{"error/one field twice", calls(DecodeAPIUserUpdate, `{"activo":"S","Activo":"N"}`),
			"activo", "is given more than once (as activo and Activo); give it once"},
		{"error/a file for a text field", companyForm(multipartCT, multipartFile("ContrasenaHacienda")),
			"ContrasenaHacienda", "must be sent as a text field, not a file"},
		{"error/one form name twice", companyForm(urlencodedCT, "Clave=1&Clave=2"),
			"Clave", "is given more than once; give it once"},
		{"error/an empty file", companyForm(multipartCT, emptyFile("logo", "logo.png")),
			"logo", "the file is empty"},
		{"error/a field of the company's get answer", companyForm(urlencodedCT, "RazonSocial=x&tieneLogo=false"),
			"tieneLogo", "is set by the service and cannot be sent; leave it out"},
		{"error/a field of the company's update answer", companyForm(urlencodedCT, "RazonSocial=x&mensajeApi="),
			"mensajeApi", "is set by the service and cannot be sent; leave it out"},
		{"error/a form name", companyForm(urlencodedCT, "RazonSocial=x&Razon_Social=y"),
			"Razon_Social", "is not a field of this call; did you mean RazonSocial?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var fe *FieldError
			if err := tt.decode(); !errors.As(err, &fe) {
				t.Fatalf("error %v", err)
			}
			if got := msg.Render(fe.Fields, msg.English)[tt.field]; !slices.Equal(got, []string{tt.want}) {
				t.Errorf("%s: %q, want %q (all %v)", tt.field, got, tt.want, fe.Fields)
			}
		})
	}
}

// calls is a call of decode on body that returns its error only.
func calls[T any](decode func([]byte) (T, error), body string) func() error {
	return func() error { _, err := decode([]byte(body)); return err }
}

const urlencodedCT = "application/x-www-form-urlencoded"

// companyForm is a call of DecodeCompanyForm on a body of content type ct
// that returns its error only.
func companyForm(ct, body string) func() error {
	return func() error { _, err := DecodeCompanyForm(ct, []byte(body)); return err }
}
