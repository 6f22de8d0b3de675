package sandbox

import (
	"reflect"
	"testing"

	"facturad/hacienda"
	"facturad/hacienda/sample"
)

// The copy Calculate fills must equal the document and share nothing that
// Calculate changes.
func TestCloneDocument(t *testing.T) {
	for _, d := range sample.Documents(3, 14) {
		c := cloneDocument(d)
		if !reflect.DeepEqual(c, d) {
			t.Fatalf("%s: the copy differs from the document", d.Clave)
		}
		want := d.DetalleServicio[0].MontoTotal
		c.DetalleServicio[0].MontoTotal = hacienda.MustAmount("123456.78")
		c.ResumenFactura.MedioPago = append(c.ResumenFactura.MedioPago[:0], hacienda.MedioPago{TipoMedioPago: "99"})
		if d.DetalleServicio[0].MontoTotal != want {
			t.Fatalf("%s: changing the copy's line changed the document", d.Clave)
		}
		if len(d.ResumenFactura.MedioPago) > 0 && d.ResumenFactura.MedioPago[0].TipoMedioPago == "99" {
			t.Fatalf("%s: the copy shares the document's payments", d.Clave)
		}
	}
}
