package hacienda

import "testing"

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
				Exoneracion: &Exoneracion{TipoDocumentoEX1: "04", NumeroDocumento: "AL-1", NombreInstitucion: "01", TarifaExonerada: a("10")}})
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
