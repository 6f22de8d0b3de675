package hacienda

import "testing"

func TestKnownCodes(t *testing.T) {
	tests := []struct {
		p, c, d string
		want    bool
	}{
		{"1", "01", "01", true}, // San José, San José, Carmen
		{"7", "01", "01", true}, // Limón
		{"1", "99", "01", false},
		{"1", "01", "99", false},
		{"8", "01", "01", false},
		{"1", "1", "1", false}, // codes are padded before the lookup
	}
	for _, tt := range tests {
		if got := KnownLocation(tt.p, tt.c, tt.d); got != tt.want {
			t.Errorf("KnownLocation(%q, %q, %q) = %v, want %v", tt.p, tt.c, tt.d, got, tt.want)
		}
	}
	if !KnownCanton("1", "01") || KnownCanton("1", "99") || KnownCanton("", "101") {
		t.Error("KnownCanton disagrees with the catalogue")
	}
	for code, want := range map[string]bool{"CRC": true, "USD": true, "EUR": true, "ABC": false, "crc": false, "": false} {
		if got := KnownCurrency(code); got != want {
			t.Errorf("KnownCurrency(%q) = %v, want %v", code, got, want)
		}
	}
}
