// Package xmltext tells whether text can be carried by an XML 1.0 document.
//
// Every text a caller sends (a line's detalle, a receptor's name, a
// company's RazonSocial) ends up in a signed v4.4 document, and XML 1.0
// cannot carry every Unicode character: the control characters other than
// tab, line feed and carriage return, U+FFFE, U+FFFF and surrogates are
// not characters of an XML document at all. Text is checked with Check at
// input, so that such a character is a 400 on its field instead of a
// document that fails to build after it was numbered.
package xmltext

import (
	"fmt"
	"unicode/utf8"
)

// IsChar reports whether r is a character of XML 1.0 (the Char production:
// #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
func IsChar(r rune) bool {
	switch {
	case r == 0x9 || r == 0xA || r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// Check returns "" when s is valid UTF-8 made only of XML characters, and
// otherwise a message naming the first offending character and its
// position (in characters, from 1), fit for a 400's field message.
func Check(s string) string {
	pos := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		pos++
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf("is not valid UTF-8 (byte %d)", i+1)
		}
		if !IsChar(r) {
			return fmt.Sprintf("contains the character U+%04X at position %d, which an XML document cannot carry", r, pos)
		}
		i += size
	}
	return ""
}

// LoneSurrogate finds, in a JSON text, the first \u escape of a surrogate
// that is not half of a pair. The JSON decoder would turn it into U+FFFD
// without a word; it returns the byte offset of the escape, or -1.
func LoneSurrogate(js []byte) int {
	for i := 0; i+5 < len(js); i++ {
		if js[i] != '\\' {
			continue
		}
		if js[i+1] != 'u' {
			i++ // an escaped character: skip it (it may be a backslash)
			continue
		}
		v, ok := hex4(js[i+2 : i+6])
		if !ok {
			continue
		}
		switch {
		case v >= 0xD800 && v <= 0xDBFF:
			if i+11 < len(js) && js[i+6] == '\\' && js[i+7] == 'u' {
				if w, ok := hex4(js[i+8 : i+12]); ok && w >= 0xDC00 && w <= 0xDFFF {
					i += 11
					continue
				}
			}
			return i
		case v >= 0xDC00 && v <= 0xDFFF:
			return i
		}
		i += 5
	}
	return -1
}

func hex4(b []byte) (rune, bool) {
	var v rune
	for _, c := range b {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return v, true
}
