package hacienda_test

import (
	"strings"
	"testing"

	"facturad/hacienda"
)

func TestIdentificacionNumberProblem(t *testing.T) {
	tests := []struct {
		tipo, numero string
		ok           bool
	}{
		{hacienda.IDFisica, "114480790", true},
		{hacienda.IDFisica, "014480790", false}, // leading zero
		{hacienda.IDFisica, "11448079", false},
		{hacienda.IDFisica, "1-1448-0790", false},
		{hacienda.IDJuridica, "3101123456", true},
		{hacienda.IDJuridica, "0310112345", true}, // 10 digits; a leading zero is not forbidden
		{hacienda.IDJuridica, "310112345", false},
		{hacienda.IDJuridica, "3-101-123456", false},
		{hacienda.IDDIMEX, "15550123456", true},
		{hacienda.IDDIMEX, "155501234567", true},
		{hacienda.IDDIMEX, "015550123456", false},
		{hacienda.IDDIMEX, "1555012345", false},
		{hacienda.IDNITE, "3004123456", true},
		{hacienda.IDNITE, "300412345X", false},
		{hacienda.IDExtranjeroNoDom, "IE9825613N", true},
		{hacienda.IDExtranjeroNoDom, strings.Repeat("A", 20), true},
		{hacienda.IDExtranjeroNoDom, strings.Repeat("A", 21), false},
		{hacienda.IDExtranjeroNoDom, "IE-9825613N", false},
		{hacienda.IDNoContribuyente, "P12345", true},
		{hacienda.IDNoContribuyente, "", false},
		{"07", "114480790", false},
		{"", "114480790", false},
	}
	for _, tt := range tests {
		p := hacienda.Identificacion{Tipo: tt.tipo, Numero: tt.numero}.NumberProblem().String()
		if (p == "") != tt.ok {
			t.Errorf("%s %q: problem %q, want ok %v", tt.tipo, tt.numero, p, tt.ok)
		}
	}
	for _, tipo := range []string{"01", "02", "03", "04", "05", "06"} {
		if !hacienda.IsIDType(tipo) {
			t.Errorf("%s is not an identification type", tipo)
		}
		if national := hacienda.IsNationalID(tipo); national != (tipo <= "04") {
			t.Errorf("%s: national %v", tipo, national)
		}
	}
	if hacienda.IsIDType("07") || hacienda.IsIDType("1") {
		t.Error("07 or 1 is an identification type")
	}
}

// Two numbers are the same taxpayer's when they differ only in left zero
// padding (the clave's 12 digits, the reception API's padded numbers);
// anything else tells them apart.
func TestSameNumber(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"3101123456", "3101123456", true},
		{"003101123456", "3101123456", true},
		{"114480790", "000114480790", true},
		{"IE9825613N", "IE9825613N", true},
		{"3101123456", "3101123457", false},
		{"3-101-123456", "3101123456", false},
		{"IE9825613N", "9825613", false},
		{"ie9825613n", "IE9825613N", false},
		{"", "", false},
		{"3101123456", "", false},
	}
	for _, tt := range tests {
		if got := hacienda.SameNumber(tt.a, tt.b); got != tt.same {
			t.Errorf("SameNumber(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
		if got := hacienda.SameNumber(tt.b, tt.a); got != tt.same {
			t.Errorf("SameNumber(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.same)
		}
	}
}
