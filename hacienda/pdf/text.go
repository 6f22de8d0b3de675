package pdf

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// The document is set in the PDF standard fonts (Helvetica), which every
// reader has and which the file does not embed. Their text is written in
// Windows-1252 (the PDF's WinAnsiEncoding): every Spanish letter (á é í ó
// ú ü ñ ¿ ¡ and their capitals), the euro sign, the typographic quotes
// and dashes, °, º, ², ³ and · are in it. Text outside it (another
// script, an emoji, the colón sign ₡) cannot be printed with these fonts;
// it is decomposed where that leaves a printable letter (ő → o) and
// otherwise shown as "?", so that a document always renders.

// replacements are characters outside Windows-1252 that have a readable
// stand-in; the unit symbols of nota 15 among them.
var replacements = map[rune]string{
	'Ω':      "Ohm", // the ohm, a unit symbol of nota 15
	'₡':      "CRC", // the colón sign
	'\u00a0': " ",
	'\u2009': " ", '\u202f': " ", // thin spaces
	'\u2010': "-", '\u2011': "-", '\u2012': "-", '\u2212': "-",
	'\u2044': "/",
	'\t':     " ", '\r': " ", '\n': " ",
}

// encode returns s in Windows-1252, the encoding of the standard fonts.
func encode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if e, ok := charmap.Windows1252.EncodeRune(r); ok && (r >= 0x20 || r == ' ') {
			b.WriteByte(e)
			continue
		}
		if rep, ok := replacements[r]; ok {
			b.WriteString(rep)
			continue
		}
		if unicode.IsControl(r) {
			continue
		}
		b.WriteString(fallback(r))
	}
	return b.String()
}

// fallback prints a rune outside Windows-1252: its base letter when its
// canonical decomposition starts with a printable one (ő → o, ț → t),
// otherwise "?".
func fallback(r rune) string {
	c, _ := utf8.DecodeRuneInString(norm.NFD.String(string(r)))
	if e, ok := charmap.Windows1252.EncodeRune(c); ok && c != r && c >= 0x20 && !unicode.Is(unicode.Mn, c) {
		return string([]byte{e})
	}
	return "?"
}

// printable reports whether every rune of s has a Windows-1252 byte, that
// is whether encode keeps s as it is.
func printable(s string) bool {
	for _, r := range s {
		if _, ok := charmap.Windows1252.EncodeRune(r); !ok || r < 0x20 {
			return false
		}
	}
	return true
}
