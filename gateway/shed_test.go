package gateway

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"facturad/hacienda/sandbox"
	"facturad/pipeline"
	"facturad/tenant/printed"
)

// TestLaneFloodIsShed floods one branch's lane through the real pipeline:
// every refusal is a 503 with Retry-After in the A.7 form, counted as
// status="shed", while the route's "5xx" counter stays at zero (the
// error-ratio alerts read only "5xx").
func TestLaneFloodIsShed(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			store := k.open(t)
			w, svc := newTenantWorld(t, store)
			p, _, sb := newTestPipelineWith(t, store, svc, func(o *pipeline.Options) {
				o.Capacity = pipeline.Capacity{Workers: 1, QueueSize: 1}
			})
			// Slow enough that the flood finds the lane taken.
			if err := sb.SetFaults(sandbox.Faults{Latency: sandbox.Duration(300 * time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
			startPipeline(t, p)
			w.testBundle = setup(t, Options{Tenants: svc, Routes: DocumentRoutes(p, nil, printed.Printer{})})
			co := w.createCompany(t, w.admin, "3101123456", "Carga de Prueba S.A.")

			const flood = 24
			type answer struct {
				status     int
				retryAfter string
				body       string
			}
			answers := make([]answer, flood)
			var wg sync.WaitGroup
			for i := range flood {
				wg.Go(func() {
					req := fasthttp.AcquireRequest()
					resp := fasthttp.AcquireResponse()
					defer fasthttp.ReleaseRequest(req)
					defer fasthttp.ReleaseResponse(resp)
					req.Header.SetMethod("POST")
					req.SetRequestURI("http://facturad.test/api/documents/v4")
					req.Header.Set("AuthToken", co.user.token)
					req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(co.user.user+":"+co.user.pass)))
					req.Header.SetContentType("application/json")
					req.SetBody(floodSend(i))
					if err := w.api.DoTimeout(req, resp, 30*time.Second); err != nil {
						answers[i] = answer{body: err.Error()}
						return
					}
					answers[i] = answer{status: resp.StatusCode(), retryAfter: string(resp.Header.Peek("Retry-After")), body: string(resp.Body())}
				})
			}
			wg.Wait()

			var sent, refused int
			for i, a := range answers {
				switch a.status {
				case 200:
					sent++
				case 503:
					refused++
					if secs, err := strconv.Atoi(a.retryAfter); err != nil || secs < 1 {
						t.Errorf("send %d: 503 with Retry-After %q", i, a.retryAfter)
					}
					if !regexp.MustCompile(`^\{"statusCode":503,"code":"[a-z_]+","message":"[^"]+","errors":\{\}\}$`).MatchString(a.body) {
						t.Errorf("send %d: 503 body %s, want the A.7 form", i, a.body)
					}
				default:
					t.Errorf("send %d: %d %s, want 200 or 503", i, a.status, a.body)
				}
			}
			t.Logf("%d sent, %d refused", sent, refused)
			if sent == 0 || refused == 0 {
				t.Fatalf("%d sent, %d refused: the flood did not fill the lane (or nothing got through)", sent, refused)
			}
			m := string(doWith(t, w.testBundle.admin, "GET", "/metrics", nil, "", nil).body)
			count := func(class string) string {
				re := regexp.MustCompile(`(?m)^facturad_http_requests_total\{method="POST",route="/api/documents/v4",status="` + class + `"\} (\d+)$`)
				if g := re.FindStringSubmatch(m); g != nil {
					return g[1]
				}
				return "absent"
			}
			if got := count("shed"); got != strconv.Itoa(refused) {
				t.Errorf(`status="shed" is %s after %d refusals`, got, refused)
			}
			if got := count("5xx"); got != "0" {
				t.Errorf(`status="5xx" is %s after a flood of one branch's lane, want 0`, got)
			}
			if got := count("2xx"); got != strconv.Itoa(sent) {
				t.Errorf(`status="2xx" is %s after %d sends`, got, sent)
			}
		})
	}
}

// floodSend is a valid send request with id_externo flood-i.
func floodSend(i int) []byte {
	return fmt.Appendf(nil, `{"id_externo":"flood-%d","tipo_documento":"01","condicion_venta":"01",
	  "receptor":{"nombre":"Cliente de Prueba","identificacion":{"tipo":"01","numero":"109870654"}},
	  "detalleServicio":[{"numeroLinea":1,"codigoCABYS":"8314100000000","cantidad":1,"unidadMedida":"Sp","detalle":"Servicio",
	    "precioUnitario":1000,"impuesto":[{"codigo":"01","codigoTarifaIVA":"08","tarifa":13}]}],
	  "resumenFactura":{"codigoTipoMoneda":{"codigoMoneda":"CRC","tipoCambio":1},"medioPago":[{"tipoMedioPago":"01"}]}}`, i)
}
