package api

import "testing"

func TestCSVCells(t *testing.T) {
	tests := []struct{ in, text, number string }{
		{"", "", ""},
		{"Proveedora Dos S.A.", "Proveedora Dos S.A.", "Proveedora Dos S.A."},
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3", "'-2+3"},
		{"@SUM(A1:A2)", "'@SUM(A1:A2)", "'@SUM(A1:A2)"},
		{"\t=1", "'\t=1", "'\t=1"},
		{"\r=1", "'\r=1", "'\r=1"},
		{"a=1", "a=1", "a=1"},
		{" =1", " =1", " =1"},
		{"-12.50", "'-12.50", "-12.50"},
		{"12.50", "12.50", "12.50"},
		{"0", "0", "0"},
		{"-0.00001", "'-0.00001", "-0.00001"},
		{"-", "'-", "'-"},
		{"-.5", "'-.5", "'-.5"},
		{"5.", "5.", "5."},
		{"1.2.3", "1.2.3", "1.2.3"},
		{"-1e5", "'-1e5", "'-1e5"},
		{"50601042600310112345600100001010000000099100000099", "50601042600310112345600100001010000000099100000099", "50601042600310112345600100001010000000099100000099"},
	}
	for _, tt := range tests {
		if got := CSVText(tt.in); got != tt.text {
			t.Errorf("CSVText(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := CSVNumber(tt.in); got != tt.number {
			t.Errorf("CSVNumber(%q) = %q, want %q", tt.in, got, tt.number)
		}
	}
}

func FuzzCSVCells(f *testing.F) {
	for _, s := range []string{"", "=1", "-12.50", "abc", "+", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, got := range []string{CSVText(s), CSVNumber(s)} {
			if got != "" && (got[0] == '=' || got[0] == '+' || got[0] == '@' || got[0] == '\t' || got[0] == '\r') {
				t.Fatalf("%q starts like a formula", got)
			}
			if got != s && got != "'"+s {
				t.Fatalf("%q became %q", s, got)
			}
			if got != "" && got[0] == '-' && !isPlainDecimal(got) {
				t.Fatalf("%q starts with - and is not a plain number", got)
			}
		}
	})
}
