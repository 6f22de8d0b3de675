package hacienda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchDoc10 is a realistic 10-line invoice: goods and services, a discount
// by percentage, several IVA rates, an exempt line, an exonerated line.
func benchDoc10() *Document {
	var lines []LineaDetalle
	for i := 0; i < 10; i++ {
		var l LineaDetalle
		switch i % 5 {
		case 0:
			l = goods(i+1, "3", "1250.50", iva("08"))
			l.Descuento = []Descuento{{PorcentajeDescuento: a("10"), CodigoDescuento: "07"}}
		case 1:
			l = service(i+1, "2", "15000", iva("04"))
		case 2:
			l = goods(i+1, "1.5", "2000", iva("10"))
		case 3:
			l = goods(i+1, "10", "5000", Impuesto{Codigo: "01", CodigoTarifaIVA: "08",
				Exoneracion: &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a("10"),
					FechaEmisionEX: time.Date(2026, 1, 5, 0, 0, 0, 0, CostaRica)}})
		case 4:
			l = service(i+1, "1", "99.99", iva("02"))
		}
		lines = append(lines, l)
	}
	return crcDoc(TypeFE, lines...)
}

func BenchmarkCalculate10Lines(b *testing.B) {
	d := benchDoc10()
	if err := Calculate(d); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Calculate(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewDocument10Lines: decode a 10-line send request, validate it
// whole and calculate it (what the send call does before numbering).
func BenchmarkNewDocument10Lines(b *testing.B) {
	body, err := json.Marshal(benchRequest10())
	if err != nil {
		b.Fatal(err)
	}
	issuer := testIssuer(b)
	b.ReportAllocs()
	for b.Loop() {
		req, err := DecodeSendRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := NewDocument(req, issuer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCalculateCall10Lines: the calculate call end to end (decode,
// calculate, encode the answer).
func BenchmarkCalculateCall10Lines(b *testing.B) {
	d := benchDoc10()
	body, err := json.Marshal(map[string]any{"detalleServicio": d.DetalleServicio, "resumenFactura": d.ResumenFactura})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req, err := DecodeCalculateRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := CalculateAmounts(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRequest10() *SendDocumentRequest {
	d := benchDoc10()
	return &SendDocumentRequest{IDExterno: "bench-1", TipoDocumento: "01", CondicionVenta: "01",
		Receptor: &ReceptorRequest{Nombre: "Cliente de Prueba", Identificacion: &IdentificacionRequest{Tipo: "02", Numero: "3101998877"},
			CorreoElectronico: "cliente@correo.cr"},
		DocumentBody: DocumentBody{DetalleServicio: d.DetalleServicio, ResumenFactura: d.ResumenFactura}}
}

// BenchmarkDecodeSendRequest: decode a generated request as sent raw
// (UTF-8) and as an encoder that writes ASCII only sends it (every accent
// a \u escape); both should cost the same. Each is decoded strictly, as a
// caller's body is, and as a stored request is read again (without the
// check of its names: what the strict decoding adds is the difference).
func BenchmarkDecodeSendRequest(b *testing.B) {
	raw, err := json.Marshal(generatedRequests(b, 1)[0])
	if err != nil {
		b.Fatal(err)
	}
	var escaped []byte
	for _, r := range string(raw) {
		if r < 0x80 {
			escaped = append(escaped, byte(r))
			continue
		}
		escaped = fmt.Appendf(escaped, `\u%04x`, r)
	}
	if bytes.Equal(raw, escaped) {
		b.Fatal("the request has no character to escape")
	}
	decoders := []struct {
		name   string
		decode func([]byte) (*SendDocumentRequest, error)
	}{{"strict", DecodeSendRequest}, {"stored", DecodeStoredSendRequest}}
	for _, body := range []struct {
		name string
		b    []byte
	}{{"utf8", raw}, {"ascii-escaped", escaped}} {
		for _, d := range decoders {
			b.Run(body.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := d.decode(body.b); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStrictDecodingCost: what the strict reading of a send body's
// names costs, as a ratio to the decoding without it (the stored
// requests' reading), each call of one timed right after one of the
// other so that both meet the same load; medians, so that a busy
// machine's pauses do not weigh.
func BenchmarkStrictDecodingCost(b *testing.B) {
	body, err := json.Marshal(generatedRequests(b, 1)[0])
	if err != nil {
		b.Fatal(err)
	}
	var strict, stored []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := DecodeSendRequest(body); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := DecodeStoredSendRequest(body); err != nil {
			b.Fatal(err)
		}
		strict, stored = append(strict, t1.Sub(t0)), append(stored, time.Since(t1))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2])
	}
	ms, mt := median(strict), median(stored)
	b.ReportMetric(ms, "strict-ns/call")
	b.ReportMetric(mt, "stored-ns/call")
	b.ReportMetric(ms/mt, "ratio")
}
