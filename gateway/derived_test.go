package gateway

import (
	"context"
	"slices"
	"sync"
	"testing"

	"facturad/pipeline"
	"facturad/tenant"
)

// fakeDerived records what reaches the pipeline of the derived routes.
type fakeDerived struct {
	mu       sync.Mutex
	voids    []pipeline.VoidRequest
	pays     []pipeline.PaymentRequest
	reissues [][]byte
}

func (f *fakeDerived) outcome(clave string) pipeline.Outcome {
	d := tenant.Document{CompanyID: 2, BranchID: 3, IDExterno: "x", Consecutivo: "00100001030000000001", Numero: 1, Clave: clave,
		Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent}}
	return pipeline.Outcome{Document: d, Answer: pipeline.Answer{Estado: d.Estado}}
}

func (f *fakeDerived) Void(_ context.Context, _ tenant.Principal, clave string, req *pipeline.VoidRequest) (pipeline.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.voids = append(f.voids, *req)
	return f.outcome(clave), nil
}

func (f *fakeDerived) Reissue(_ context.Context, _ tenant.Principal, clave string, body []byte) (pipeline.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reissues = append(f.reissues, body)
	return f.outcome(clave), nil
}

func (f *fakeDerived) Pay(_ context.Context, _ tenant.Principal, clave string, req *pipeline.PaymentRequest) (pipeline.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pays = append(f.pays, *req)
	return f.outcome(clave), nil
}

func (f *fakeDerived) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.voids) + len(f.pays) + len(f.reissues)
}

// TestDerivedBodies: the bodies of the void, re-issue and payment routes
// are read strictly: a name the call does not have, or a value of a JSON
// type its field does not take, is a 400 in the contract's error form on
// that field's path (all at once), and nothing reaches the pipeline. A
// misspelt "lineas" must never become a full void.
func TestDerivedBodies(t *testing.T) {
	const clave = "50601012600310188800100100001010000000001100000001"
	void, reissue, pay := "/api/documents/"+clave+"/anular/v4", "/api/documents/"+clave+"/reemitir/v4", "/api/documents/"+clave+"/recibo-pago/v4"
	tests := []struct {
		name, path, body string
		fields           []string // the 400's fields; none: accepted
	}{
		{"ok/void whole", void, `{"id_externo":"nc-1","razon":"Emitida por error"}`, nil},
		{"ok/void lines, quantities as numbers and strings", void,
			`{"id_externo":"nc-1","razon":"Devolución","lineas":[{"numeroLinea":1,"cantidad":1.5},{"numeroLinea":2,"cantidad":"2"}]}`, nil},
		{"ok/payment", pay, `{"id_externo":"rep-1","monto":1000.5,"medioPago":"04","fecha":"2026-11-21"}`, nil},
		{"ok/payment amount as a string", pay, `{"id_externo":"rep-1","monto":"1000","medioPago":"01"}`, nil},
		{"ok/re-issue", reissue, `{"id_externo":"re-1","receptor":{"nombre":"Otra S.A."},"detalleServicio":[],"Fecha_Emision":"2026-11-21T10:00:00"}`, nil},

		{"error/void misspelt lines", void, `{"id_externo":"nc-1","razon":"Devolución","lines":[{"numeroLinea":1,"cantidad":1}]}`, []string{"lines"}},
		{"error/void unknown line field", void, `{"id_externo":"nc-1","razon":"x y z","lineas":[{"numeroLinea":1,"cantidad":1},{"linea":2}]}`, []string{"lineas[1].linea"}},
		{"error/void wrong types at once", void, `{"id_externo":7,"razon":["a"],"lineas":[{"numeroLinea":true,"cantidad":{}}]}`,
			[]string{"id_externo", "razon", "lineas[0].numeroLinea", "lineas[0].cantidad"}},
		{"error/void lines not an array", void, `{"id_externo":"nc-1","razon":"x y z","lineas":{"numeroLinea":1}}`, []string{"lineas"}},
		{"error/void line numbers not integers", void, `{"id_externo":"nc-1","razon":"x y z","lineas":[{"numeroLinea":"1","cantidad":1},{"numeroLinea":1.5,"cantidad":1},{"numeroLinea":99999999999,"cantidad":1}]}`,
			[]string{"lineas[0].numeroLinea", "lineas[1].numeroLinea", "lineas[2].numeroLinea"}},
		{"error/void a line not an object", void, `{"id_externo":"nc-1","razon":"x y z","lineas":[1]}`, []string{"lineas[0]"}},
		{"error/payment unknown and mistyped", pay, `{"id_externo":"rep-1","monto":[1],"medio_pago":"04","fecha":20261121}`,
			[]string{"monto", "medio_pago", "fecha"}},
		{"error/re-issue unknown names", reissue, `{"id_externo":"re-1","receptr":{"nombre":"x"},"lineas":[]}`, []string{"receptr", "lineas"}},
		{"error/a field named twice in two cases", void, `{"id_externo":"nc-1","ID_Externo":"nc-2","razon":"x y z","lineas":[{"numeroLinea":1,"NumeroLinea":2,"cantidad":1}]}`,
			[]string{"id_externo", "lineas[0].numeroLinea"}},
		{"error/a field named twice", void, `{"id_externo":"nc-1","razon":"x y z","lineas":[],"lineas":[{"numeroLinea":1,"cantidad":1}]}`,
			[]string{"lineas"}},
		{"error/re-issue unknown nested names", reissue, `{"id_externo":"re-1","detalleServicio":[{"cantidad":1,"montoDescuento":5}],"receptor":{"nombre":"x","correo":"a@b.cr"}}`,
			[]string{"detalleServicio[0].montoDescuento", "ReceptorRequest.Correo"}},
		{"error/re-issue computed amount", reissue, `{"id_externo":"re-1","resumenFactura":{"totalComprobante":5}}`,
			[]string{"resumenFactura.totalComprobante"}},
		{"error/not an object", void, `[{"id_externo":"nc-1"}]`, []string{"body"}},
		{"error/payment not JSON", pay, `{"id_externo":"rep-1",`, []string{"body"}},
		{"error/two values", pay, `{"id_externo":"rep-1"} {}`, []string{"body"}},
		{"error/empty", void, ``, []string{"body"}},
		{"error/re-issue not an object", reissue, `"re-1"`, []string{"body"}},
		{"error/invalid UTF-8", void, "{\"id_externo\":\"nc-1\",\"razon\":\"a\xffb\"}", []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDerived{}
			b := setup(t, Options{Tenants: &fakeTenants{}, Routes: DerivedRoutes(f)})
			r := b.do(t, "POST", tt.path, &fakeBranch, "application/json", []byte(tt.body))
			if tt.fields == nil {
				if r.status != 200 || f.calls() != 1 {
					t.Fatalf("%d %s; %d calls", r.status, r.body, f.calls())
				}
				return
			}
			errs := requireA7(t, r, 400)
			var got []string
			for k := range errs {
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.fields))
			if !slices.Equal(got, want) {
				t.Errorf("errors on %v, want %v: %s", got, want, r.body)
			}
			if f.calls() != 0 {
				t.Errorf("a refused body reached the pipeline")
			}
		})
	}

	// What the pipeline is given: the decoded body.
	f := &fakeDerived{}
	b := setup(t, Options{Tenants: &fakeTenants{}, Routes: DerivedRoutes(f)})
	b.do(t, "POST", void, &fakeBranch, "application/json", []byte(`{"id_externo":"nc-9","razon":"Parcial","lineas":[{"numeroLinea":2,"cantidad":0.5}]}`))
	b.do(t, "POST", pay, &fakeBranch, "application/json", []byte(`{"id_externo":"rep-9","monto":"12.5","medioPago":"02"}`))
	if len(f.voids) != 1 || f.voids[0].IDExterno != "nc-9" || f.voids[0].Razon != "Parcial" || len(f.voids[0].Lineas) != 1 ||
		f.voids[0].Lineas[0].NumeroLinea != 2 || f.voids[0].Lineas[0].Cantidad.String() != "0.5" {
		t.Errorf("void given %+v", f.voids)
	}
	if len(f.pays) != 1 || f.pays[0].IDExterno != "rep-9" || f.pays[0].Monto.String() != "12.5" || f.pays[0].MedioPago.Code() != "02" || f.pays[0].Fecha != "" {
		t.Errorf("payment given %+v", f.pays)
	}
}
