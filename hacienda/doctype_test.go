package hacienda_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"facturad/hacienda"
)

// Every type's root element has its official schema, whose target
// namespace is the type's; the codes are 01 to 10, once each, in order.
func TestTypeTableSchemas(t *testing.T) {
	target := regexp.MustCompile(`targetNamespace="([^"]+)"`)
	table := hacienda.TypeTable()
	for i, ti := range table {
		if want := hacienda.DocumentType(fmt.Sprintf("%02d", i+1)); ti.Code != want {
			t.Errorf("row %d has code %s, want %s", i, ti.Code, want)
		}
		b, err := os.ReadFile(filepath.Join("testdata", "xsd", "2024", "v4.4", ti.Root+"_V4.4.xsd"))
		if err != nil {
			t.Errorf("%s: %v", ti.Code, err)
			continue
		}
		m := target.FindSubmatch(b)
		if m == nil || string(m[1]) != ti.Namespace {
			t.Errorf("%s: namespace %q, the schema of %s says %q", ti.Code, ti.Namespace, ti.Root, m)
		}
		if ti.Code.RootElement() != ti.Root || ti.Code.Namespace() != ti.Namespace || ti.Code.Name() != ti.Name {
			t.Errorf("%s: the methods disagree with the table", ti.Code)
		}
	}
	if len(table) != 10 {
		t.Errorf("%d types, want 01 to 10", len(table))
	}
}

// The attributes are the annex's and the decisions' (docs/decisions-v44.md
// 29 and 32, spec §3 and §14.2), and every list derived from the table
// says the same.
func TestTypeTableAttributes(t *testing.T) {
	codes := func(keep func(hacienda.TypeInfo) bool) []string { return hacienda.TypeCodes(keep) }
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"issued", codes(func(t hacienda.TypeInfo) bool { return !t.IsReceiverMessage() }), []string{"01", "02", "03", "04", "08", "09", "10"}},
		{"receiver's messages", codes(hacienda.TypeInfo.IsReceiverMessage), []string{"05", "06", "07"}},
		{"notes", codes(func(t hacienda.TypeInfo) bool { return t.Note }), []string{"02", "03"}},
		{"issued by the buyer", codes(func(t hacienda.TypeInfo) bool { return t.IssuedByBuyer }), []string{"08"}},
		{"receptor required", codes(func(t hacienda.TypeInfo) bool { return t.ReceptorRequired }), []string{"01", "08", "10"}},
		{"answerable", codes(func(t hacienda.TypeInfo) bool { return t.Answerable }), []string{"01", "02", "03", "09"}},
		{"named by TipoDocIR", codes(func(t hacienda.TypeInfo) bool { return t.TipoDocIR != "" }), []string{"01", "02", "03", "04"}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	var issued []string
	for _, d := range hacienda.DocumentTypes {
		issued = append(issued, string(d))
		if !d.Valid() {
			t.Errorf("%s: not Valid", d)
		}
		if info, _ := d.Info(); info.TipoDocIR != "" && info.TipoDocIR != string(d) {
			t.Errorf("%s is named by TipoDocIR %s", d, info.TipoDocIR)
		}
	}
	if !slices.Equal(issued, tests[0].want) {
		t.Errorf("DocumentTypes = %v", issued)
	}
	for m, want := range map[int]string{hacienda.ReceptorAceptado: "05", hacienda.ReceptorParcial: "06", hacienda.ReceptorRechazado: "07", 0: "", 4: ""} {
		if got := hacienda.ReceptorMessageType(m); got != want {
			t.Errorf("ReceptorMessageType(%d) = %q, want %q", m, got, want)
		}
	}
	for _, code := range []hacienda.DocumentType{"05", "00", "11", ""} {
		if code.Valid() || code.Abbrev() != "" {
			t.Errorf("%q: Valid or has an abbrev", code)
		}
	}
	for _, code := range []string{"00", "11", "1"} {
		if _, err := hacienda.NewConsecutivo("001", "00001", code, 1); err == nil {
			t.Errorf("consecutivo of type %q accepted", code)
		}
	}
}
