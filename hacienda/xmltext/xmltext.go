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
	"bytes"
	"unicode/utf8"

	"facturad/hacienda/msg"
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

// Check returns the zero Message when s is valid UTF-8 made only of XML
// characters, and otherwise a message naming the first offending
// character and its position (in characters, from 1), fit for a 400's
// field message.
func Check(s string) msg.Message {
	pos := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		pos++
		if r == utf8.RuneError && size == 1 {
			return msg.InvalidUTF8At.With(i + 1)
		}
		if !IsChar(r) {
			return msg.XMLCharacter.With(r, pos)
		}
		i += size
	}
	return msg.Message{}
}

// CheckJSON returns the zero Message when a JSON text can be decoded without losing
// anything, and otherwise a message about the body: it is not valid UTF-8,
// or it has a \u escape of a surrogate that is not half of a pair. The
// JSON decoder would turn either into U+FFFD without a word, and a
// document would carry text its caller never sent.
func CheckJSON(js []byte) msg.Message {
	m, _ := ScanJSON(js)
	return m
}

// ScanJSON is CheckJSON that also reports, from the same pass over the
// escapes, whether the text may hold a character XML cannot carry once
// decoded: an escape of one (a control character other than tab, line
// feed and carriage return, U+FFFE, U+FFFF), or a raw U+FFFE or U+FFFF,
// the only ways such a character gets into valid JSON. Most bodies have
// none, and need no further look.
func ScanJSON(js []byte) (problem msg.Message, nonChar bool) {
	if !utf8.Valid(js) {
		return msg.BodyInvalidUTF8.With(invalidAt(js) + 1), false
	}
	lone, nonChar := scanEscapes(js)
	if lone >= 0 {
		return msg.BodySurrogate.With(lone + 1), false
	}
	nonChar = nonChar || bytes.Contains(js, []byte("\uFFFE")) || bytes.Contains(js, []byte("\uFFFF"))
	return msg.Message{}, nonChar
}

// invalidAt is the offset of the first byte of b that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// scanEscapes walks js's \u escapes once: the offset of the first
// surrogate escape that is not half of a pair (-1 when none; the walk
// stops there), and whether an escape before it stands for a character
// XML cannot carry.
func scanEscapes(js []byte) (lone int, nonChar bool) {
	lone = -1
	escapes(js, func(at int, r rune, isLone bool) bool {
		if isLone {
			lone = at
			return false
		}
		nonChar = nonChar || !IsChar(r)
		return true
	})
	return lone, nonChar
}

// escapes calls f with the offset and value of each \u escape of js, a
// surrogate pair as one character, and whether it is a surrogate that is
// not half of a pair; it stops when f returns false.
func escapes(js []byte, f func(at int, r rune, lone bool) bool) {
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
		at := i
		i += 5
		switch {
		case v >= 0xD800 && v <= 0xDBFF:
			if at+11 < len(js) && js[at+6] == '\\' && js[at+7] == 'u' {
				if w, ok := hex4(js[at+8 : at+12]); ok && w >= 0xDC00 && w <= 0xDFFF {
					i += 6
					if !f(at, 0x10000+(v-0xD800)<<10+(w-0xDC00), false) {
						return
					}
					continue
				}
			}
			if !f(at, v, true) {
				return
			}
		case v >= 0xDC00 && v <= 0xDFFF:
			if !f(at, v, true) {
				return
			}
		default:
			if !f(at, v, false) {
				return
			}
		}
	}
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
