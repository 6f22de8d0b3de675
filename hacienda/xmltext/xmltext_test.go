package xmltext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		in   string
		bad  string // a part of the message, "" when valid
	}{
		{"ok/empty", "", ""},
		{"ok/spanish", "Café «año» ñandú — 10 %", ""},
		{"ok/tab, newline, carriage return", "a\tb\nc\rd", ""},
		{"ok/astral", "emoji 😀", ""},
		{"ok/last BMP character", "\uFFFD", ""},
		{"bad/NUL", "a\x00b", "U+0000 at position 2"},
		{"bad/bell", "\a", "U+0007"},
		{"bad/escape", "x\x1b[0m", "U+001B"},
		{"bad/U+FFFE", "\uFFFE", "U+FFFE"},
		{"bad/U+FFFF", "ok\uFFFF", "U+FFFF at position 3"},
		{"bad/invalid UTF-8", "caf\xe9", "not valid UTF-8 (byte 4)"},
		{"bad/encoded surrogate", "\xed\xa0\x80", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.in).String()
			if (got == "") != (tt.bad == "") || !strings.Contains(got, tt.bad) {
				t.Errorf("Check(%q) = %q, want it to say %q", tt.in, got, tt.bad)
			}
		})
	}
}

func TestLoneSurrogate(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`{"a":"plain"}`, -1},
		{`{"a":"\u00e9"}`, -1},
		{`{"a":"\ud83d\ude00"}`, -1},
		{`{"a":"\uD83D\uDE00"}`, -1},
		{`{"a":"\\ud800"}`, -1}, // an escaped backslash, then text
		{`{"a":"\ud800"}`, 6},
		{`{"a":"\ud800x"}`, 6},
		{`{"a":"\udc00"}`, 6},
		{`{"a":"x\ud83d\u0041"}`, 7},
		{`{"a":"\ud83d\ude00\udc00"}`, 18},
	}
	for _, tt := range tests {
		if got := loneSurrogate([]byte(tt.in)); got != tt.want {
			t.Errorf("loneSurrogate(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestEscapesNonChar(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"a":"plain"}`, false},
		{`{"a":"C\u00e9dula \u00f1"}`, false}, // accents escaped by an ASCII-only encoder
		{`{"a":"tab\u0009lf\u000Acr\u000d"}`, false},
		{`{"a":"\ud83d\ude00"}`, false},
		{`{"a":"\\u0001"}`, false}, // an escaped backslash, then text
		{`{"a":"\u0001"}`, true},
		{`{"a":"ok \u00e9 then \u001b"}`, true},
		{`{"a":"\uFFFE"}`, true},
		{`{"a":"\uffff"}`, true},
		{`{"a":"\ud800"}`, false}, // lone: scanEscapes reports it apart
	}
	for _, tt := range tests {
		if got := escapesNonChar([]byte(tt.in)); got != tt.want {
			t.Errorf("escapesNonChar(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"caf\u00e9"}`:   "",
		"{\"a\":\"caf\xe9\"}": "not valid UTF-8 (at byte 10)",
		`{"a":"\udc00"}`:      "unpaired surrogate escape at byte 7",
	} {
		got := CheckJSON([]byte(in)).String()
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("CheckJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCheck: whatever Check accepts encodes as XML text, and a JSON string
// whose escapes scanEscapes accepts decodes without replacement.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "abc", "a\x00", "\uFFFE", "caf\xe9", `\ud800`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Check(s).IsZero() {
			if !utf8.ValidString(s) {
				t.Fatalf("accepted invalid UTF-8 %q", s)
			}
			for _, r := range s {
				if !IsChar(r) {
					t.Fatalf("accepted %U in %q", r, s)
				}
			}
		}
		js, _ := json.Marshal(s)
		if loneSurrogate(js) != -1 && utf8.ValidString(s) {
			t.Fatalf("a lone surrogate found in the encoding of valid text %q: %s", s, js)
		}
	})
}

// loneSurrogate and escapesNonChar are scanEscapes's two answers apart.
func loneSurrogate(js []byte) int {
	lone, _ := scanEscapes(js)
	return lone
}

func escapesNonChar(js []byte) bool {
	_, nonChar := scanEscapes(js)
	return nonChar
}
