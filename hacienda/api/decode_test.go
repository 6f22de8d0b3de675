package api

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
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
		{"ok/the primary spelling wins", `{"monedaIdLocal":"USD","monedaLocal":"CRC"}`, BranchInput{MonedaLocal: "CRC"}, nil},
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
