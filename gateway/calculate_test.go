package gateway

import (
	"encoding/json"
	"testing"

	"facturad/docs/examples"
)

func TestCalculateRoute(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Calculos S.A.")

	// Worked by hand: 2 × 1,000.50 = 2,001.00; 10 % discount 200.10;
	// subtotal 1,800.90; IVA 13 % = 234.117; line total 2,035.017. Plus an
	// exempt service line of 500.
	body := []byte(`{"condicion_venta":"01","detalleServicio":[
	 {"numeroLinea":1,"codigoCABYS":"2392000000000","cantidad":2,"unidadMedida":"Unid","detalle":"Taza",
	  "precioUnitario":"1000.50","descuento":[{"porcentajeDescuento":10,"codigoDescuento":"07"}],
	  "impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]},
	 {"numeroLinea":2,"codigoCABYS":"8111100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Servicio",
	  "precioUnitario":500,"impuesto":[{"codigo":"01","codigoTarifaIVA":"10","tarifa":0}]}],
	 "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`)
	r := w.do(t, "POST", "/api/documents/calculate/v4", &co.user, "application/json", body)
	if r.status != 200 {
		t.Fatalf("calculate: %d %s", r.status, r.body)
	}
	var got struct {
		DetalleServicio []struct {
			MontoTotal      json.Number `json:"montoTotal"`
			SubTotal        json.Number `json:"subTotal"`
			MontoTotalLinea json.Number `json:"montoTotalLinea"`
			Descuento       []struct {
				MontoDescuento json.Number `json:"montoDescuento"`
			} `json:"descuento"`
			Impuesto []struct {
				Monto json.Number `json:"monto"`
			} `json:"impuesto"`
		} `json:"detalleServicio"`
		ResumenFactura struct {
			TotalVenta         json.Number `json:"totalVenta"`
			TotalDescuentos    json.Number `json:"totalDescuentos"`
			TotalImpuesto      json.Number `json:"totalImpuesto"`
			TotalServExentos   json.Number `json:"totalServExentos"`
			TotalComprobante   json.Number `json:"totalComprobante"`
			TotalServExonerado json.Number `json:"totalServExonerado"`
		} `json:"resumenFactura"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.body)
	}
	if len(got.DetalleServicio) != 2 {
		t.Fatalf("lines: %s", r.body)
	}
	l := got.DetalleServicio[0]
	checks := []struct{ name, got, want string }{
		{"line 1 montoTotal", l.MontoTotal.String(), "2001"},
		{"line 1 montoDescuento", l.Descuento[0].MontoDescuento.String(), "200.1"},
		{"line 1 subTotal", l.SubTotal.String(), "1800.9"},
		{"line 1 IVA", l.Impuesto[0].Monto.String(), "234.117"},
		{"line 1 montoTotalLinea", l.MontoTotalLinea.String(), "2035.017"},
		{"totalVenta", got.ResumenFactura.TotalVenta.String(), "2501"},
		{"totalDescuentos", got.ResumenFactura.TotalDescuentos.String(), "200.1"},
		{"totalImpuesto", got.ResumenFactura.TotalImpuesto.String(), "234.117"},
		{"totalServExentos", got.ResumenFactura.TotalServExentos.String(), "500"},
		{"totalComprobante", got.ResumenFactura.TotalComprobante.String(), "2535.017"},
	}
	for _, c := range checks {
		if !sameNumber(c.got, c.want) {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if got.ResumenFactura.TotalServExonerado == "" {
		t.Errorf("totalServExonerado missing: %s", r.body)
	}
}

func TestCalculateRouteErrors(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Calculos S.A.")
	tests := []struct {
		name   string
		body   string
		status int
		fields []string
	}{
		{
			name:   "error/negative quantity and rate not matching its code, at once",
			body:   `{"detalleServicio":[{"numeroLinea":1,"codigoCABYS":"2392000000000","cantidad":-1,"unidadMedida":"Unid","detalle":"x","precioUnitario":10,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":4}]}],"resumenFactura":{"medioPago":[{"tipoMedioPago":"01"}]}}`,
			status: 400,
			fields: []string{"detalleServicio[0].cantidad", "detalleServicio[0].impuesto[0].tarifa"},
		},
		{name: "error/invalid JSON", body: `{"detalleServicio":[`, status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.do(t, "POST", "/api/documents/calculate/v4", &co.user, "application/json", []byte(tt.body))
			errs := requireA7(t, r, tt.status)
			for _, f := range tt.fields {
				requireField(t, errs, f)
			}
		})
	}
	if r := w.do(t, "POST", "/api/documents/calculate/v4", nil, "application/json", []byte(`{}`)); r.status != 401 {
		t.Errorf("without credentials: %d, want 401", r.status)
	}
}

// sameNumber compares two JSON numbers as decimals written without
// trailing zeros.
func sameNumber(a, b string) bool { return trimZeros(a) == trimZeros(b) }

func trimZeros(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			for len(s) > 0 && s[len(s)-1] == '0' {
				s = s[:len(s)-1]
			}
			if s[len(s)-1] == '.' {
				s = s[:len(s)-1]
			}
			return s
		}
	}
	return s
}

// TestCalculateWhollyExoneratedBonus: the two example bodies whose line has
// a bonus with the IVA charged to the client (discount code 02) and an
// exoneration of the whole 13 % owe no IVA. The IVA is computed on
// MontoTotal (decisions #6) and so is its exoneration: before, the
// exoneration was computed on BaseImponible, which left 130 to pay on the
// first and refused the second.
func TestCalculateWhollyExoneratedBonus(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Calculos S.A.")
	all, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, ex := range all {
		byName[ex.Name] = ex.Body
	}
	for _, tt := range []struct {
		example string
		want    map[string]string
	}{
		{"factura-bonificacion-exonerada", map[string]string{
			"montoTotal": "10000", "subTotal": "9000", "baseImponible": "9000",
			"iva.monto": "1300", "iva.montoExoneracion": "1300", "impuestoNeto": "0", "montoTotalLinea": "9000",
			"totalMercExonerada": "10000", "totalMercanciasGravadas": "0", "totalImpuesto": "0", "totalComprobante": "9000",
		}},
		{"factura-bonificacion-selectivo", map[string]string{
			// The selectivo (30 % of 9,000) is not exonerated and is
			// the whole net tax.
			"montoTotal": "10000", "subTotal": "9000", "baseImponible": "11700", "selectivo.monto": "2700",
			"iva.monto": "1300", "iva.montoExoneracion": "1300", "impuestoNeto": "2700", "montoTotalLinea": "11700",
			"totalMercExonerada": "10000", "totalMercanciasGravadas": "0", "totalImpuesto": "2700", "totalComprobante": "11700",
		}},
	} {
		t.Run("ok/"+tt.example, func(t *testing.T) {
			body := byName[tt.example]
			if body == nil {
				t.Fatalf("no example %s", tt.example)
			}
			r := w.do(t, "POST", "/api/documents/calculate/v4", &co.user, "application/json", body)
			if r.status != 200 {
				t.Fatalf("calculate: %d %s", r.status, r.body)
			}
			var got struct {
				DetalleServicio []struct {
					MontoTotal, SubTotal, BaseImponible, ImpuestoNeto, MontoTotalLinea json.Number
					Impuesto                                                           []struct {
						Codigo      string
						Monto       json.Number
						Exoneracion *struct{ MontoExoneracion json.Number }
					}
				}
				ResumenFactura struct {
					TotalMercExonerada, TotalMercanciasGravadas, TotalImpuesto, TotalComprobante json.Number
				}
			}
			if err := json.Unmarshal(r.body, &got); err != nil || len(got.DetalleServicio) != 1 {
				t.Fatalf("decode: %v\n%s", err, r.body)
			}
			l, rf := got.DetalleServicio[0], got.ResumenFactura
			have := map[string]string{
				"montoTotal": l.MontoTotal.String(), "subTotal": l.SubTotal.String(), "baseImponible": l.BaseImponible.String(),
				"impuestoNeto": l.ImpuestoNeto.String(), "montoTotalLinea": l.MontoTotalLinea.String(),
				"totalMercExonerada": rf.TotalMercExonerada.String(), "totalMercanciasGravadas": rf.TotalMercanciasGravadas.String(),
				"totalImpuesto": rf.TotalImpuesto.String(), "totalComprobante": rf.TotalComprobante.String(),
			}
			for _, tx := range l.Impuesto {
				switch tx.Codigo {
				case "01":
					have["iva.monto"] = tx.Monto.String()
					if tx.Exoneracion != nil {
						have["iva.montoExoneracion"] = tx.Exoneracion.MontoExoneracion.String()
					}
				case "02":
					have["selectivo.monto"] = tx.Monto.String()
				}
			}
			for k, want := range tt.want {
				if !sameNumber(have[k], want) {
					t.Errorf("%s = %q, want %s", k, have[k], want)
				}
			}
		})
	}
}
