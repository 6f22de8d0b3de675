package registry

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/sandbox"
	"facturad/signer/benchcpu"
	"facturad/signer/certmint"
	"facturad/tenant/authcache"
)

// checkServer is a registry with one of each case the checks tell apart.
func checkServer(t testing.TB) *server {
	return newServer(t, map[string]reply{
		"/fe/ae?identificacion=3101123456": {200, `{"nombre":"EMPRESA","tipoIdentificacion":"02","regimen":{"codigo":1,"descripcion":"Régimen general"},"situacion":{"moroso":"NO","omiso":"NO","estado":"Inscrito"},"actividades":[{"estado":"A","tipo":"P","codigo":"6201.0","descripcion":"Programación"},{"estado":"I","tipo":"S","codigo":"9609.0","descripcion":"Otras"}]}`, nil},
		"/fe/ae?identificacion=109990888":  {200, `{"nombre":"COMPRADOR","tipoIdentificacion":"01","regimen":{"codigo":1,"descripcion":"Régimen general"},"situacion":{"moroso":"NO","omiso":"NO","estado":"Inscrito"},"actividades":[{"estado":"A","tipo":"P","codigo":"4711.0","descripcion":"Comercio"},{"estado":"I","tipo":"S","codigo":"5610.0","descripcion":"Restaurantes"}]}`, nil},
		"/fe/ae?identificacion=900930330":  {200, `{"nombre":"NADIE","tipoIdentificacion":"01","situacion":{"moroso":"NO","omiso":"NO","estado":"No inscrito","mensaje":"No inscrito"},"actividades":[]}`, nil},
		"/fe/cabys?codigo=4321000000200":   {200, `[{"codigo":"4321000000200","descripcion":"Bombas","impuesto":13}]`, nil},
		"/fe/cabys?codigo=2111100000100":   {200, `[{"codigo":"2111100000100","descripcion":"Carne","impuesto":1}]`, nil},
		"/fe/cabys?codigo=1111111111999":   {200, `[]`, nil},
		"/fe/ex?autorizacion=AL-1":         {200, `{"numeroDocumento":"AL-1","identificacion":"109990888","porcentajeExoneracion":13,"fechaEmision":"2026-01-05T00:00:00","fechaVencimiento":"2027-01-05T00:00:00","cabys":["4321000000200"],"tipoDocumento":{"codigo":"04","descripcion":"x"},"CodigoInstitucion":"01","nombreInstitucion":"Ministerio de Hacienda","poseeCabys":true}`, nil},
		"/fe/ex?autorizacion=AL-2":         {200, `{"numeroDocumento":"AL-2","identificacion":"3101999999","porcentajeExoneracion":13,"fechaEmision":"2026-01-05T00:00:00","fechaVencimiento":"2027-01-05T00:00:00","poseeCabys":false}`, nil},
		"/fe/ex?autorizacion=AL-3":         {200, `{"numeroDocumento":"AL-3","identificacion":"109990888","porcentajeExoneracion":13,"fechaEmision":"2024-01-05T00:00:00","fechaVencimiento":"2025-01-05T00:00:00","poseeCabys":false}`, nil},
		"/fe/ex?autorizacion=AL-4":         {200, `{"numeroDocumento":"AL-4","identificacion":"109990888","porcentajeExoneracion":6,"fechaEmision":"2026-01-05T00:00:00","fechaVencimiento":"2027-01-05T00:00:00","poseeCabys":false}`, nil},
	})
}

func checkDoc() *hacienda.Document {
	return &hacienda.Document{
		Type:                  hacienda.TypeFE,
		CodigoActividadEmisor: "6201.0",
		FechaEmision:          time.Date(2026, 12, 1, 10, 0, 0, 0, hacienda.CostaRica),
		Emisor:                hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "02", Numero: "3101123456"}},
		Receptor:              &hacienda.Party{Identificacion: hacienda.Identificacion{Tipo: "01", Numero: "109990888"}},
		DetalleServicio: []hacienda.LineaDetalle{
			{CodigoCABYS: "4321000000200", Impuesto: []hacienda.Impuesto{{Codigo: "01", Tarifa: hacienda.MustAmount("13")}}},
		},
	}
}

func exonerate(d *hacienda.Document, numero, tarifa string) {
	d.DetalleServicio[0].Impuesto[0].Exoneracion = &hacienda.Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: numero,
		TarifaExonerada: hacienda.MustAmount(tarifa), FechaEmisionEX: time.Date(2026, 1, 5, 0, 0, 0, 0, hacienda.CostaRica)}
}

func TestCheck(t *testing.T) {
	const exo = "detalleServicio[0].impuesto[0].exoneracion."
	tests := []struct {
		name string
		edit func(d *hacienda.Document)
		want []string // "field" refuses, "~field" warns
	}{
		{"all in order", func(d *hacienda.Document) {}, nil},
		{"exoneration expired, the document not dated yet", func(d *hacienda.Document) {
			exonerate(d, "AL-3", "13")
			d.FechaEmision = time.Time{}
		}, []string{exo + "numeroDocumento", "~" + exo + "fechaEmisionEX"}},
		{"issuer activity not its own", func(d *hacienda.Document) { d.CodigoActividadEmisor = "4711.0" }, []string{"codigo_actividad_emisor"}},
		{"issuer activity inactive", func(d *hacienda.Document) { d.CodigoActividadEmisor = "9609.0" }, []string{"codigo_actividad_emisor"}},
		{"receptor unknown", func(d *hacienda.Document) { d.Receptor.Identificacion.Numero = "310100000" }, []string{"ReceptorRequest.Identificacion"}},
		{"receptor no inscrito", func(d *hacienda.Document) { d.Receptor.Identificacion.Numero = "900930330" }, []string{"ReceptorRequest.Identificacion"}},
		{"receptor unknown in a TE", func(d *hacienda.Document) {
			d.Type = hacienda.TypeTE
			d.Receptor.Identificacion.Numero = "310100000"
		}, []string{"ReceptorRequest.Identificacion"}},
		{"foreign receptor not asked", func(d *hacienda.Document) {
			d.Receptor.Identificacion = hacienda.Identificacion{Tipo: "05", Numero: "X123"}
		}, nil},
		{"receptor activity not its own", func(d *hacienda.Document) { d.CodigoActividadReceptor = "6201.0" }, []string{"codigo_actividad_receptor"}},
		{"receptor activity inactive warns", func(d *hacienda.Document) { d.CodigoActividadReceptor = "5610.0" }, []string{"~codigo_actividad_receptor"}},
		{"receptor activity its own", func(d *hacienda.Document) { d.CodigoActividadReceptor = "4711.0" }, nil},
		{"FEC: the seller is not asked, the company's activity is", func(d *hacienda.Document) {
			d.Type = hacienda.TypeFEC
			d.CodigoActividadEmisor = ""
			d.Emisor.Identificacion = hacienda.Identificacion{Tipo: "01", Numero: "310100000"}
			d.Receptor.Identificacion = hacienda.Identificacion{Tipo: "02", Numero: "3101123456"}
			d.CodigoActividadReceptor = "9609.0"
		}, []string{"codigo_actividad_receptor"}},
		{"unknown CAByS", func(d *hacienda.Document) { d.DetalleServicio[0].CodigoCABYS = "1111111111999" }, []string{"detalleServicio[0].codigoCABYS"}},
		{"CAByS rate differs warns", func(d *hacienda.Document) { d.DetalleServicio[0].CodigoCABYS = "2111100000100" }, []string{"~detalleServicio[0].codigoCABYS"}},
		{"exoneration in order", func(d *hacienda.Document) { exonerate(d, "AL-1", "13") }, nil},
		{"exoneration unknown", func(d *hacienda.Document) { exonerate(d, "AL-9", "13") }, []string{exo + "numeroDocumento"}},
		{"exoneration another's", func(d *hacienda.Document) { exonerate(d, "AL-2", "13") }, []string{exo + "numeroDocumento"}},
		{"exoneration expired", func(d *hacienda.Document) { exonerate(d, "AL-3", "13") }, []string{exo + "numeroDocumento", "~" + exo + "fechaEmisionEX"}},
		{"exoneration above its percentage", func(d *hacienda.Document) { exonerate(d, "AL-4", "13") }, []string{exo + "tarifaExonerada"}},
		{"exoneration not covering the CAByS", func(d *hacienda.Document) {
			exonerate(d, "AL-1", "13")
			d.DetalleServicio[0].CodigoCABYS = "2111100000100"
			d.DetalleServicio[0].Impuesto[0].Tarifa = hacienda.MustAmount("1")
			d.DetalleServicio[0].Impuesto[0].Exoneracion.TarifaExonerada = hacienda.MustAmount("1")
		}, []string{exo + "numeroDocumento"}},
		{"exoneration of a type the registry does not hold", func(d *hacienda.Document) {
			exonerate(d, "AL-9", "13")
			d.DetalleServicio[0].Impuesto[0].Exoneracion.TipoDocumentoEX1 = "03"
		}, nil},
	}
	s := checkServer(t)
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 10, 0, 0, 0, hacienda.CostaRica))
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := checkDoc()
			tt.edit(d)
			var got []string
			for _, f := range r.Check(context.Background(), d) {
				if f.Msg.In(msg.Spanish) == "" || f.Msg.String() == "" {
					t.Errorf("%s: a message is missing: %+v", f.Field, f)
				}
				if f.Refuse {
					got = append(got, f.Field)
				} else {
					got = append(got, "~"+f.Field)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
		})
	}
}

// The registry down and nothing cached: warnings only, each saying what
// was not checked. Cached answers past their TTL still judge, but only
// warn.
func TestCheckRegistryDown(t *testing.T) {
	s := checkServer(t)
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 10, 0, 0, 0, hacienda.CostaRica))
	r := newRegistry(t, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	d := checkDoc()
	d.Receptor.Identificacion.Numero = "310100000"
	if f := r.Check(context.Background(), d); len(f) != 1 || !f[0].Refuse {
		t.Fatalf("up: %+v", f)
	}
	clk.Advance(DefaultTTL + LocalTTL)
	s.setFail(&reply{503, `{"code":503,"status":"Service unavailable"}`, nil})
	f := r.Check(context.Background(), d)
	if len(f) != 1 || f[0].Refuse || !strings.Contains(f[0].Msg.String(), "could not be asked again") {
		t.Errorf("stale: %+v", f)
	}
	d.DetalleServicio[0].CodigoCABYS = "9999999999100" // never asked
	var unreached int
	for _, f := range r.Check(context.Background(), d) {
		if f.Refuse {
			t.Errorf("refused while the registry is down: %+v", f)
		}
		if strings.Contains(f.Msg.String(), "could not be reached") {
			unreached++
		}
	}
	if unreached != 1 {
		t.Errorf("%d warnings say the registry could not be reached, want 1", unreached)
	}
}

// BenchmarkCheckWarm is a check of a document whose questions are all
// cached: what the checks add to a send once the cache is warm, against
// one raw RSA-2048 signature (a send costs about three).
//
//	go test -run '^$' -bench CheckWarm ./hacienda/registry/
func BenchmarkCheckWarm(b *testing.B) {
	s := checkServer(b)
	clk := sandbox.NewManualClock(time.Date(2026, 12, 1, 10, 0, 0, 0, hacienda.CostaRica))
	r := newRegistry(b, s, authcache.NewMemory(authcache.MemoryOptions{Now: clk.Now}), clk)
	d := checkDoc()
	d.CodigoActividadReceptor = "4711.0"
	exonerate(d, "AL-1", "13")
	ctx := context.Background()
	if f := r.Check(ctx, d); len(f) != 0 {
		b.Fatalf("findings on a clean document: %+v", f)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchcpu.ProcessCPU(b)
	for b.Loop() {
		r.Check(ctx, d)
	}
	b.StopTimer()
	cpu := benchcpu.ProcessCPU(b) - cpu0
	rsa := benchcpu.RawRSA(b, certmint.TestKey(1), 200)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1000, "cpu-µs/check")
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(rsa), "x-raw-rsa")
}
