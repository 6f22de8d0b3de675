package hacienda

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// xmlDeclaration starts every document this package writes. The encoding
// name is written in lower case, as the tax authority's own examples do; the
// bytes are UTF-8 either way.
const xmlDeclaration = `<?xml version="1.0" encoding="utf-8"?>`

// xmlDateTime is the layout of every xs:dateTime written: seconds, no
// fraction, explicit offset (always -06:00, Costa Rica time).
const xmlDateTime = "2006-01-02T15:04:05-07:00"

// xmlWriter appends XML to a byte slice without any insignificant
// whitespace: no indentation, no newline after the declaration, so that the
// bytes signed are exactly the bytes built. The first error sticks; the
// caller discards whatever was written once there is one.
type xmlWriter struct {
	buf   []byte
	err   error
	stack []string // open elements, to name the place of an error
	line  int      // NumeroLinea of the line being written, 0 outside lines

	stackBuf [8]string // backing array of stack: v4.4 nests at most 7 deep

	// tracing makes the writer record every element below the root it
	// writes, in order, in trace (the parser's structure check).
	tracing bool
	trace   []xmlTraceEntry
}

// xmlTraceEntry is one element written: its name and its depth below the
// root (0 for the root's children).
type xmlTraceEntry struct {
	depth int
	name  string
}

func (w *xmlWriter) traced(name string) {
	if w.tracing {
		w.trace = append(w.trace, xmlTraceEntry{depth: len(w.stack), name: name})
	}
}

// where names the element name inside the open elements, for errors.
func (w *xmlWriter) where(name string) string {
	p := strings.Join(w.stack, "/")
	if name != "" {
		if p != "" {
			p += "/"
		}
		p += name
	}
	if w.line > 0 {
		p += fmt.Sprintf(" (line %d)", w.line)
	}
	return p
}

func (w *xmlWriter) failf(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *xmlWriter) start(name string) {
	w.traced(name)
	w.stack = append(w.stack, name)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

func (w *xmlWriter) end(name string) {
	if n := len(w.stack); n > 0 {
		w.stack = w.stack[:n-1]
	}
	w.buf = append(w.buf, '<', '/')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// open and close write the tags of a leaf element (no error context).
func (w *xmlWriter) open(name string) {
	w.traced(name)
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

func (w *xmlWriter) close(name string) {
	w.buf = append(w.buf, '<', '/')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// str writes <name>v</name>, or fails when v is empty: name is a required
// element.
func (w *xmlWriter) str(name, v string) {
	if v == "" {
		w.failf("%s is required", w.where(name))
		return
	}
	w.open(name)
	w.text(name, v)
	w.close(name)
}

// optStr writes <name>v</name> unless v is empty.
func (w *xmlWriter) optStr(name, v string) {
	if v == "" {
		return
	}
	w.open(name)
	w.text(name, v)
	w.close(name)
}

// amount writes a required decimal element.
func (w *xmlWriter) amount(name string, a Amount) {
	if !a.IsSet() {
		w.failf("%s is required", w.where(name))
		return
	}
	w.open(name)
	w.buf = appendDecimal(w.buf, a.Decimal())
	w.close(name)
}

// optAmount writes a decimal element unless the amount is absent.
func (w *xmlWriter) optAmount(name string, a Amount) {
	if !a.IsSet() {
		return
	}
	w.open(name)
	w.buf = appendDecimal(w.buf, a.Decimal())
	w.close(name)
}

// dateTime writes a required xs:dateTime in Costa Rica time.
func (w *xmlWriter) dateTime(name string, t time.Time) {
	if t.IsZero() {
		w.failf("%s is required", w.where(name))
		return
	}
	w.open(name)
	w.buf = t.In(CostaRica).AppendFormat(w.buf, xmlDateTime)
	w.close(name)
}

// optInt writes an integer element unless n is zero (every integer element
// of v4.4 that may be absent is a positive count or code).
func (w *xmlWriter) optInt(name string, n int64) {
	if n == 0 {
		return
	}
	w.open(name)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.close(name)
}

// text appends character data, escaped. &, < and > become entity
// references, and a carriage return becomes &#xD; so that it survives the
// line-end normalisation of any XML reader. Invalid UTF-8 and characters
// XML 1.0 does not allow (most C0 controls, U+FFFE, U+FFFF) are an error,
// not something to drop silently.
func (w *xmlWriter) text(name, s string) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '<' && c != '>' {
			i++
			continue
		}
		var esc string
		width := 1
		switch {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '\r':
			esc = "&#xD;"
		case c == '\n' || c == '\t':
			i++
			continue
		case c < 0x20:
			w.failf("%s contains the control character %U, which XML cannot carry", w.where(name), rune(c))
			return
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				w.failf("%s is not valid UTF-8", w.where(name))
				return
			}
			if r == 0xFFFE || r == 0xFFFF {
				w.failf("%s contains the non-character %U, which XML cannot carry", w.where(name), r)
				return
			}
			i += n
			continue
		}
		w.buf = append(w.buf, s[last:i]...)
		w.buf = append(w.buf, esc...)
		i += width
		last = i
	}
	w.buf = append(w.buf, s[last:]...)
}

// attr appends ` name="value"`, escaped for an attribute value: besides the
// text escapes, quotes, tabs and newlines become references so that
// attribute-value normalisation gives the value back unchanged.
func (w *xmlWriter) attr(name, v string) {
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '=', '"')
	start := len(w.buf)
	w.text("@"+name, v)
	if w.err != nil {
		return
	}
	// Second pass over the (already text-escaped) value for the characters
	// that only matter inside an attribute.
	var out []byte
	seg := w.buf[start:]
	for i, c := range seg {
		var esc string
		switch c {
		case '"':
			esc = "&quot;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		default:
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(seg)+16), seg[:i]...)
		}
		out = append(out, esc...)
	}
	if out != nil {
		w.buf = append(w.buf[:start], out...)
	}
	w.buf = append(w.buf, '"')
}

// appendDecimal writes d as a plain xs:decimal: at most MoneyPlaces
// fraction digits (rounded half away from zero beyond that), trailing
// fraction zeros and a trailing point removed, never an exponent: 1200,
// 438.9255, 0.5, 0. It does not depend on shopspring/decimal's package-wide
// formatting switches.
func appendDecimal(b []byte, d decimal.Decimal) []byte {
	if d.Exponent() < -MoneyPlaces {
		d = d.Round(MoneyPlaces)
	}
	if d.Sign() == 0 {
		return append(b, '0')
	}
	var tmp [40]byte
	var digits []byte
	if d.NumDigits() <= 18 {
		digits = strconv.AppendInt(tmp[:0], d.CoefficientInt64(), 10)
	} else {
		digits = d.Coefficient().Append(tmp[:0], 10)
	}
	if digits[0] == '-' {
		b = append(b, '-')
		digits = digits[1:]
	}
	exp := int(d.Exponent())
	if exp >= 0 {
		b = append(b, digits...)
		for range exp {
			b = append(b, '0')
		}
		return b
	}
	frac := -exp
	// Drop trailing zeros of the fraction.
	for frac > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		frac--
	}
	if frac == 0 {
		return append(b, digits...)
	}
	if len(digits) <= frac {
		b = append(b, '0', '.')
		for range frac - len(digits) {
			b = append(b, '0')
		}
		return append(b, digits...)
	}
	b = append(b, digits[:len(digits)-frac]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-frac:]...)
}
