package hacienda

import (
	"strings"
	"testing"
)

// TestValidEmail: the annex's CorreoElectronico rule, which takes letters
// outside ASCII, counts characters (not bytes) up to 160, and takes no
// blank.
func TestValidEmail(t *testing.T) {
	long := func(local string, n int) string { // an address of n characters
		return local + strings.Repeat("a", n-len([]rune(local))-len("@example.com")) + "@example.com"
	}
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"compras@example.com", true},
		{"josé@ñandú.cr", true},
		{"ventas@ñandú.cr", true},
		{"o'brien+facturas@example.co.cr", true},
		{"\"quoted\"@example.com", true},
		{long("ñ", 160), true}, // 161 bytes, 160 characters
		{long("a", 161), false},
		{"", false},
		{"sin-arroba.example.com", false},
		{"a@localhost", false}, // the annex wants a dot in the domain
		{"a b@example.com", false},
		{"\"a b\"@example.com", false},
		{" compras@example.com", false},
		{"compras@example.com\u00a0", false},
		{"a@b@example.com", false},
		{"a;b@example.com", false},
		{"<a@example.com>", false},
	} {
		if got := ValidEmail(tt.in); got != tt.want {
			t.Errorf("ValidEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
