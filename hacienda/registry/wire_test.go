package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"
)

func readReal(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The answers the live service gave, as documented publicly, read into
// what the checks use.
func TestDecodeRealAnswers(t *testing.T) {
	t.Run("ae", func(t *testing.T) {
		tp, err := DecodeTaxpayer(readReal(t, "ae-bncr.json"))
		if err != nil {
			t.Fatal(err)
		}
		if tp.Nombre != "BANCO NACIONAL DE COSTA RICA" || tp.TipoIdentificacion != "02" || tp.Regimen.Codigo != 1 ||
			tp.Situacion.Estado != "Inscrito" || tp.Situacion.Moroso != "NO" || !tp.Registered() {
			t.Errorf("taxpayer = %+v", tp)
		}
		a, ok := tp.Activity("6492.0")
		if !ok || !a.Active() || a.Tipo != "P" || a.Descripcion != "Otros tipos de crédito" {
			t.Errorf("activity 6492.0 = %+v, %v", a, ok)
		}
		if _, ok := tp.Activity("649200"); ok {
			t.Error("a code in another form matched")
		}
	})
	t.Run("ex", func(t *testing.T) {
		e, err := DecodeExoneration(readReal(t, "ex-AL-00460853-20.json"))
		if err != nil {
			t.Fatal(err)
		}
		if e.Autorizacion != "AL-00460853-20" || e.Identificacion != "401760738" || !e.PorcentajeExoneracion.Equal(decimal.NewFromInt(13)) ||
			e.TipoDocumento.Codigo != "04" || e.CodigoInstitucion != "01" || e.NombreInstitucion != "Ministerio de Hacienda" || !e.PoseeCabys {
			t.Errorf("exoneration = %+v", e)
		}
		if got := e.FechaVencimiento.Format("2006-01-02"); got != "2021-12-15" {
			t.Errorf("fechaVencimiento = %s", got)
		}
		if !e.Covers("7211200000100") || e.Covers("7211200000200") {
			t.Error("the authorisation's CAByS list is not read")
		}
		if !e.Expired(mustDate(t, "2021-12-16")) || e.Expired(mustDate(t, "2021-12-15")) {
			t.Error("an authorisation must be valid through the end of its last day")
		}
	})
	t.Run("tc", func(t *testing.T) {
		r, err := DecodeDollar(readReal(t, "tc-dolar.json"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Fecha != "2026-07-29" || r.Venta.String() != "454.55" || r.Compra.String() != "449.94" {
			t.Errorf("rate = %+v", r)
		}
	})
	t.Run("cabys by code", func(t *testing.T) {
		items, err := DecodeCabys(readReal(t, "cabys-codigo-elided.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].Codigo != "2132100000100" || items[0].Descripcion != "Jugo de tomate concentrado" || items[0].Impuesto.String() != "13" {
			t.Errorf("items = %+v", items)
		}
	})
	t.Run("cabys by words", func(t *testing.T) {
		items, err := DecodeCabys(readReal(t, "cabys-q-elided.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 1 || items[0].Impuesto.String() != "13" {
			t.Errorf("items = %+v", items)
		}
	})
	for _, name := range []string{"ae-400.json", "historico-503.json", "historico-400.json"} {
		t.Run("error form "+name, func(t *testing.T) {
			if errorForm(readReal(t, name)) == 0 {
				t.Error("the registry's error form was not recognised")
			}
		})
	}
	t.Run("an answer is not an error form", func(t *testing.T) {
		for _, name := range []string{"ae-bncr.json", "ex-AL-00460853-20.json", "tc-dolar.json", "cabys-codigo-elided.json"} {
			if errorForm(readReal(t, name)) != 0 {
				t.Errorf("%s read as an error", name)
			}
		}
	})
}

func TestDecodeForms(t *testing.T) {
	tests := []struct {
		name string
		body string
		ok   bool
	}{
		{"code as a number (2019 docs)", `{"nombre":"X","tipoIdentificacion":"01","actividades":[{"estado":"A","tipo":"P","codigo":751101,"descripcion":"d"}]}`, true},
		{"no name nor activities", `{"code":404,"status":"Information no available"}`, false},
		{"not json", `<html>blocked</html>`, false},
		{"regimen as a string code", `{"nombre":"X","regimen":{"codigo":"1","descripcion":"General"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTaxpayer([]byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("err = %v, want ok %v", err, tt.ok)
			}
		})
	}
	rates, err := DecodeRates([]byte(`[{"fecha":"2019-12-01 00:00:00","compra":558.9,"venta":565.89}]`))
	if err != nil || len(rates) != 1 || rates[0].Fecha != "2019-12-01" || rates[0].Venta.String() != "565.89" {
		t.Errorf("history = %+v, %v", rates, err)
	}
	if _, err := DecodeDollar([]byte(`{"venta":{"fecha":"2019-10-24T00:00:00-06:00","valor":583.16},"compra":{"fecha":"2019-10-24T00:00:00-06:00","valor":576.94}}`)); err != nil {
		t.Errorf("the 2019 form of the dollar's rate: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"ae-bncr.json", "ex-AL-00460853-20.json", "tc-dolar.json", "cabys-codigo-elided.json", "cabys-q-elided.json", "ae-400.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "real", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// None may panic; what one reads must be usable.
		if tp, err := DecodeTaxpayer(b); err == nil {
			_ = tp.Registered()
			_, _ = tp.Activity("6201.0")
		}
		if e, err := DecodeExoneration(b); err == nil {
			_ = e.Covers("1")
		}
		_, _ = DecodeCabys(b)
		_, _ = DecodeRates(b)
		_, _ = DecodeDollar(b)
		_ = errorForm(b)
	})
}
