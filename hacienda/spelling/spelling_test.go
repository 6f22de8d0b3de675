package spelling

import "testing"

func TestNearest(t *testing.T) {
	lineFields := []string{"numeroLinea", "codigoCABYS", "cantidad", "unidadMedida", "detalle", "precioUnitario",
		"montoTotal", "descuento", "subTotal", "baseImponible", "impuesto"}
	for _, tt := range []struct {
		name, given string
		known       []string
		want        string
	}{
		{"ok/one edit", "cantidd", lineFields, "cantidad"},
		{"ok/two edits", "descuentos", lineFields, "descuento"},
		{"ok/case", "CANTIDA", lineFields, "cantidad"},
		{"ok/trailing word of the given name", "montoDescuento", lineFields, "descuento"},
		{"ok/leading word of a known name", "precio", lineFields, "precioUnitario"},
		{"ok/snake case for camel case", "tipo_documento", []string{"tipoDocumento", "tipoCambio"}, "tipoDocumento"},
		{"ok/camel case for snake case", "idExterno", []string{"id_externo", "clave"}, "id_externo"},
		{"ok/flag suffix", "trusted-ca", []string{"listen", "sandbox-trusted-ca"}, "sandbox-trusted-ca"},
		{"ok/flag typo", "listn", []string{"listen", "sandbox-trusted-ca"}, "listen"},
		{"ok/flag prefix", "drain", []string{"listen", "drain-delay"}, "drain-delay"},
		{"ok/flag plural", "webhook-worker", []string{"webhook-workers", "drain-delay"}, "webhook-workers"},
		{"ok/closest wins", "montoTotl", lineFields, "montoTotal"},
		{"ok/first of equals wins", "ab", []string{"abc", "abd"}, "abc"},
		{"none/far", "foo", lineFields, ""},
		{"none/every letter changed", "xy", []string{"id"}, ""},
		{"none/inside a word", "unit", lineFields, ""},
		{"none/short affix", "to", []string{"montoTotal"}, ""},
		{"none/empty known", "cantidad", nil, ""},
		{"none/the name itself", "cantidad", []string{"cantidad"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Nearest(tt.given, tt.known); got != tt.want {
				t.Errorf("Nearest(%q) = %q, want %q", tt.given, got, tt.want)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"listn", "listen", 1}, {"ab", "ba", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
