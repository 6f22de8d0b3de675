package signer

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"

	"facturad/hacienda/xmltext"
)

// WithCanonicalInput tells Sign that doc was written in canonical form: its
// root element, byte for byte, is already its own inclusive Canonical XML
// 1.0 (the form hacienda.MarshalXML writes). Sign then takes the document
// digest as the SHA-256 of those bytes instead of parsing and
// canonicalizing the whole document, which is most of the work around the
// RSA operation.
//
// The option is a promise that Sign checks rather than trusts: a single
// pass over the bytes accepts only a strict subset of canonical XML (see
// IsCanonicalInput), and any document outside it is signed the ordinary
// way, with the same result. The signature is identical either way for the
// same document, clock and id.
func WithCanonicalInput() Option {
	return func(o *signOptions) { o.canonicalInput = true }
}

// withFastPathReport makes Sign record in *took whether it took the
// canonical-input path (tests).
func withFastPathReport(took *bool) Option {
	return func(o *signOptions) { o.fastPath = took }
}

// IsCanonicalInput reports whether Sign with WithCanonicalInput takes the
// fast path for doc: whether doc is an optional XML declaration (version
// 1.0, UTF-8), optional white space, and a root element whose bytes are
// their own inclusive Canonical XML 1.0, followed only by white space.
//
// The accepted subset is deliberately narrow: ASCII element and attribute
// names without prefixes; namespace declarations only on the root (the
// default namespace first, then prefixed ones by prefix, none empty);
// attributes in canonical order, double-quoted, one space before each;
// explicit end tags, no white space inside tags; in text only &amp; &lt;
// &gt; &#xD; as references and no literal '>' or CR; in attribute values
// only &amp; &lt; &quot; as references and no tab, LF or CR at all;
// no comments, processing instructions, CDATA sections or DOCTYPE; valid
// UTF-8 of XML characters only.
func IsCanonicalInput(doc []byte) bool {
	_, ok := scanCanonical(bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")))
	return ok
}

// canonicalRoot is where scanCanonical found the root element.
type canonicalRoot struct {
	start, end int    // doc[start:end] is the root element
	endTag     int    // offset of the root's end tag, where the signature goes
	name       string // the root's name
	ns         []etree.Attr
}

// element returns a childless stand-in for the root: its name and its
// namespace declarations, all an element below it inherits under
// inclusive C14N 1.0 (no xml:* attributes are accepted on the root).
func (r *canonicalRoot) element() *etree.Element {
	e := etree.NewElement(r.name)
	for _, a := range r.ns {
		e.CreateAttr(a.FullKey(), a.Value)
	}
	return e
}

// maxCanonicalDepth bounds the element nesting the scanner follows (v4.4
// nests 7 deep); deeper documents take the ordinary path.
const maxCanonicalDepth = 32

// scanCanonical checks that doc is in the subset IsCanonicalInput
// describes and returns where its root element is. Any doubt is a refusal:
// the caller then parses and canonicalizes the document.
func scanCanonical(doc []byte) (canonicalRoot, bool) {
	var r canonicalRoot
	i, ok := scanProlog(doc)
	if !ok {
		return r, false
	}
	r.start = i
	name, i, ok := scanRootStartTag(doc, i, &r)
	if !ok {
		return r, false
	}
	if i, ok = scanContent(doc, i, name, &r); !ok {
		return r, false
	}
	for ; i < len(doc); i++ {
		if !isSpace(doc[i]) {
			return r, false
		}
	}
	return r, true
}

// scanProlog accepts an optional XML declaration and the white space after
// it, and returns the offset of what follows.
func scanProlog(doc []byte) (int, bool) {
	i := 0
	if bytes.HasPrefix(doc, []byte("<?xml")) {
		end := bytes.Index(doc, []byte("?>"))
		if end < 0 {
			return 0, false
		}
		if !xmlDeclarationOK(doc[len("<?xml"):end]) {
			return 0, false
		}
		i = end + len("?>")
	}
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	return i, true
}

// scanRootStartTag reads the root's start tag at doc[i:]: its namespace
// declarations, then its plain attributes, each group in canonical order.
// It records the root's name and namespace declarations in r and returns
// the name and the offset after the tag.
func scanRootStartTag(doc []byte, i int, r *canonicalRoot) (name []byte, next int, ok bool) {
	if i >= len(doc) || doc[i] != '<' {
		return nil, i, false
	}
	i++
	name, i, ok = scanName(doc, i)
	if !ok {
		return nil, i, false
	}
	r.name = string(name)
	var lastPrefix, lastAttr []byte
	seenDefault, seenPrefixed, seenPlain := false, false, false
	for i < len(doc) && doc[i] == ' ' {
		i++
		attr, j, ok := scanName(doc, i)
		if !ok {
			// A prefixed name: only xmlns:p is accepted.
			if !bytes.HasPrefix(doc[i:], []byte("xmlns:")) {
				return nil, i, false
			}
			prefix, k, ok := scanName(doc, i+len("xmlns:"))
			if !ok || seenPlain || (seenPrefixed && bytes.Compare(prefix, lastPrefix) <= 0) ||
				len(prefix) >= 3 && strings.EqualFold(string(prefix[:3]), "xml") {
				return nil, i, false
			}
			value, k, ok := scanAttrValue(doc, k)
			if !ok || len(value) == 0 || bytes.IndexByte(value, '&') >= 0 {
				return nil, i, false
			}
			r.ns = append(r.ns, etree.Attr{Space: "xmlns", Key: string(prefix), Value: string(value)})
			lastPrefix, seenPrefixed, i = prefix, true, k
			continue
		}
		if string(attr) == "xmlns" {
			if seenDefault || seenPrefixed || seenPlain {
				return nil, i, false
			}
			value, k, ok := scanAttrValue(doc, j)
			if !ok || len(value) == 0 || bytes.IndexByte(value, '&') >= 0 {
				return nil, i, false
			}
			r.ns = append(r.ns, etree.Attr{Key: "xmlns", Value: string(value)})
			seenDefault, i = true, k
			continue
		}
		if len(attr) >= 3 && strings.EqualFold(string(attr[:3]), "xml") ||
			seenPlain && bytes.Compare(attr, lastAttr) <= 0 {
			return nil, i, false
		}
		_, k, ok := scanAttrValue(doc, j)
		if !ok {
			return nil, i, false
		}
		lastAttr, seenPlain, i = attr, true, k
	}
	if i >= len(doc) || doc[i] != '>' {
		return nil, i, false
	}
	return name, i + 1, true
}

// scanContent reads the root's content at doc[i:], up to and including
// the end tag of the root (named rootName), whose place it records in r:
// nested elements without namespace declarations or prefixes, canonical
// text, explicit end tags. It returns the offset after the root's end tag.
func scanContent(doc []byte, i int, rootName []byte, r *canonicalRoot) (int, bool) {
	var stackBuf [maxCanonicalDepth][]byte
	stack := append(stackBuf[:0], rootName)
	for len(stack) > 0 {
		if i >= len(doc) {
			return i, false
		}
		switch c := doc[i]; {
		case c == '<':
			if i+1 < len(doc) && doc[i+1] == '/' {
				name, j, ok := scanName(doc, i+2)
				if !ok || !bytes.Equal(name, stack[len(stack)-1]) || j >= len(doc) || doc[j] != '>' {
					return i, false
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					r.endTag, r.end = i, j+1
				}
				i = j + 1
				continue
			}
			name, j, ok := scanName(doc, i+1)
			if !ok || len(stack) == maxCanonicalDepth {
				return i, false
			}
			var last []byte
			for j < len(doc) && doc[j] == ' ' {
				attr, k, ok := scanName(doc, j+1)
				if !ok || (len(attr) >= 3 && strings.EqualFold(string(attr[:3]), "xml")) ||
					(last != nil && bytes.Compare(attr, last) <= 0) {
					return i, false
				}
				if _, k, ok = scanAttrValue(doc, k); !ok {
					return i, false
				}
				last, j = attr, k
			}
			if j >= len(doc) || doc[j] != '>' {
				return i, false
			}
			stack = append(stack, name)
			i = j + 1
		case c == '&':
			n := textReference(doc[i:])
			if n == 0 {
				return i, false
			}
			i += n
		case c == '>' || c == '\r':
			return i, false
		case c < utf8.RuneSelf:
			if c < 0x20 && c != '\t' && c != '\n' {
				return i, false
			}
			i++
		default:
			n, ok := xmlRune(doc[i:])
			if !ok {
				return i, false
			}
			i += n
		}
	}
	return i, true
}

// xmlDeclarationOK accepts the body of an XML declaration of exactly the
// form ` version="1.0"[ encoding="UTF-8"][ standalone="yes|no"]` (the
// encoding name in any case, optional white space before "?>").
func xmlDeclarationOK(decl []byte) bool {
	rest, ok := bytes.CutPrefix(decl, []byte(` version="1.0"`))
	if !ok {
		return false
	}
	if after, ok := bytes.CutPrefix(rest, []byte(` encoding="`)); ok {
		enc, tail, ok := bytes.Cut(after, []byte(`"`))
		if !ok || !strings.EqualFold(string(enc), "utf-8") {
			return false
		}
		rest = tail
	}
	if after, ok := bytes.CutPrefix(rest, []byte(` standalone="`)); ok {
		v, tail, ok := bytes.Cut(after, []byte(`"`))
		if !ok || string(v) != "yes" && string(v) != "no" {
			return false
		}
		rest = tail
	}
	for _, c := range rest {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// scanName reads an unprefixed ASCII name at doc[i:]: a letter or '_', then
// letters, digits, '_', '-' or '.'. It fails on anything else, including
// prefixed names.
func scanName(doc []byte, i int) (name []byte, next int, ok bool) {
	start := i
	for i < len(doc) {
		c := doc[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' ||
			i > start && (c >= '0' && c <= '9' || c == '-' || c == '.') {
			i++
			continue
		}
		break
	}
	if i == start || i < len(doc) && doc[i] == ':' {
		return nil, start, false
	}
	return doc[start:i], i, true
}

// scanAttrValue reads `="value"` at doc[i:], value in canonical attribute
// form, and returns the raw value.
func scanAttrValue(doc []byte, i int) (value []byte, next int, ok bool) {
	if i+1 >= len(doc) || doc[i] != '=' || doc[i+1] != '"' {
		return nil, i, false
	}
	i += 2
	start := i
	for i < len(doc) {
		switch c := doc[i]; {
		case c == '"':
			return doc[start:i], i + 1, true
		case c == '&':
			n := attrReference(doc[i:])
			if n == 0 {
				return nil, i, false
			}
			i += n
		case c == '<':
			return nil, i, false
		case c < utf8.RuneSelf:
			if c < 0x20 {
				return nil, i, false // tab, LF and CR too: canonical form escapes them
			}
			i++
		default:
			n, ok := xmlRune(doc[i:])
			if !ok {
				return nil, i, false
			}
			i += n
		}
	}
	return nil, i, false
}

// textReference and attrReference return the length of the reference at
// the start of b when it is one that canonical XML writes in character
// data (respectively in an attribute value), else 0.
func textReference(b []byte) int {
	for _, ref := range [...]string{"&amp;", "&lt;", "&gt;", "&#xD;"} {
		if bytes.HasPrefix(b, []byte(ref)) {
			return len(ref)
		}
	}
	return 0
}

func attrReference(b []byte) int {
	// Canonical XML also writes &#x9; &#xA; &#xD; in attribute values, but
	// Sign refuses those characters in attributes altogether (see
	// checkDocument), so they are not accepted here either.
	for _, ref := range [...]string{"&amp;", "&lt;", "&quot;"} {
		if bytes.HasPrefix(b, []byte(ref)) {
			return len(ref)
		}
	}
	return 0
}

// xmlRune reads one multi-byte UTF-8 character at the start of b and
// reports whether it is a character XML 1.0 allows.
func xmlRune(b []byte) (int, bool) {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n <= 1 {
		return n, false
	}
	return n, xmltext.IsChar(r)
}
