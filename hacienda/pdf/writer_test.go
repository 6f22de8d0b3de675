package pdf

import (
	"io"
	"strings"
	"testing"
)

// splitLines keeps every line within the cell (a single character wider
// than the cell alone excepted), breaks at spaces when it can, and loses
// no character but the spaces it breaks at.
func TestSplitLines(t *testing.T) {
	w := newWriter(io.Discard, letter, info{})
	for _, tc := range []struct {
		text  string
		width float64
		style string
		size  float64
	}{
		{"Artículo número 001 de señalización vial", 20, "", textSize},
		{"Artículo número 001 de señalización vial", 200, "", textSize},
		{strings.Repeat("W", 80), 15, "B", 9},
		{"palabra " + strings.Repeat("x", 60) + " fin", 18, "", smallTextSize},
		{"a  b   c", 2.5, "", textSize},
		{"", 10, "", textSize},
	} {
		w.setFont(tc.style, tc.size)
		text := encode(tc.text)
		lines := w.splitLines(text, tc.width)
		for _, l := range lines {
			if got := w.width(l); got > tc.width-2*cellMargin+0.01 && len(l) > 1 {
				t.Errorf("%q in %g mm: line %q is %.2f mm wide", tc.text, tc.width, l, got)
			}
		}
		joined := strings.ReplaceAll(strings.Join(lines, ""), " ", "")
		if want := strings.ReplaceAll(text, " ", ""); joined != want {
			t.Errorf("%q in %g mm: lines %q lose text", tc.text, tc.width, lines)
		}
		if len(lines) > 1 && strings.Contains(tc.text, " ") && tc.width >= 15 {
			for _, l := range lines[:len(lines)-1] {
				if strings.HasSuffix(l, " ") {
					t.Errorf("%q: line %q ends in the space it broke at", tc.text, l)
				}
			}
		}
	}
	w.setFont("", textSize)
	if got := w.splitLines("uno dos tres", 200); len(got) != 1 || got[0] != "uno dos tres" {
		t.Errorf("a short text is split: %q", got)
	}
	if got := w.splitLines("uno dos tres", 9); len(got) < 2 || got[0] != "uno" {
		t.Errorf("a narrow cell breaks at the spaces: %q", got)
	}
}
