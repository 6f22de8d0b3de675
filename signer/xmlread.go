package signer

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beevik/etree"

	"facturad/hacienda/xmltext"
)

// readXML reads doc into an etree document. The common document, plain
// elements, attributes and text with an optional XML declaration, is read
// by readPlainXML, several times faster than etree's reader (which goes
// through encoding/xml); anything else (comments, CDATA sections,
// processing instructions, a DOCTYPE, carriage returns, names outside
// ASCII, and every malformed document) is left to etree, whose tree and
// errors are then the answer. The two build the same tree for what
// readPlainXML reads: a test compares them on the test documents and a
// fuzz test on any input.
func readXML(doc []byte) (*etree.Document, error) {
	if d, err := readPlainXML(doc); err == nil {
		return d, nil
	}
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		return nil, err
	}
	return d, nil
}

// errNotPlain means that readPlainXML leaves doc to etree.
var errNotPlain = errors.New("not a plain XML document")

// plainMaxDepth is the deepest nesting readPlainXML reads, below etree's
// own limit (1024), which decides deeper documents.
const plainMaxDepth = 1000

// readPlainXML reads a document made only of an optional XML declaration,
// white space, and one root element holding elements, attributes and text
// with the predefined entities and character references, building the
// tree etree builds for it; it returns errNotPlain for anything else.
func readPlainXML(doc []byte) (*etree.Document, error) {
	p := plainReader{doc: doc}
	d := etree.NewDocument()
	if bytes.HasPrefix(doc, []byte("<?xml")) {
		if err := p.declaration(d); err != nil {
			return nil, err
		}
	}
	p.space(&d.Element)
	if p.i >= len(doc) || doc[p.i] != '<' {
		return nil, errNotPlain
	}
	if err := p.element(&d.Element, 1); err != nil {
		return nil, err
	}
	p.space(&d.Element)
	if p.i != len(doc) {
		return nil, errNotPlain
	}
	return d, nil
}

type plainReader struct {
	doc []byte
	i   int
}

// space reads white space outside the root element, which etree keeps as
// text of the document.
func (p *plainReader) space(parent *etree.Element) {
	start := p.i
	if p.skipSpace() {
		parent.CreateText("").SetData(string(p.doc[start:p.i]))
	}
}

// declaration reads `<?xml version="1.0" encoding="UTF-8"?>` (the encoding
// optional, either quote) as etree's processing instruction.
func (p *plainReader) declaration(d *etree.Document) error {
	end := bytes.Index(p.doc[p.i:], []byte("?>"))
	if end < 0 {
		return errNotPlain
	}
	inst := string(p.doc[p.i+len("<?xml") : p.i+end])
	if inst == "" || (inst[0] != ' ' && inst[0] != '\t' && inst[0] != '\n') {
		return errNotPlain
	}
	inst = strings.TrimLeft(inst, " \t\n")
	switch inst {
	case `version="1.0"`, `version="1.0" encoding="UTF-8"`, `version='1.0'`, `version='1.0' encoding='UTF-8'`,
		`version="1.0" encoding="utf-8"`:
	default:
		return errNotPlain
	}
	d.CreateProcInst("xml", inst)
	p.i += end + len("?>")
	return nil
}

// element reads an element and its content at doc[p.i] == '<'.
func (p *plainReader) element(parent *etree.Element, depth int) error {
	if depth > plainMaxDepth {
		return errNotPlain
	}
	p.i++ // '<'
	name, ok := p.name()
	if !ok {
		return errNotPlain
	}
	el := parent.CreateElement(name)
	for {
		sp := p.skipSpace()
		if p.i >= len(p.doc) {
			return errNotPlain
		}
		switch p.doc[p.i] {
		case '/':
			if p.i+1 >= len(p.doc) || p.doc[p.i+1] != '>' {
				return errNotPlain
			}
			p.i += 2
			return nil
		case '>':
			p.i++
			return p.content(el, name, depth)
		}
		if !sp {
			return errNotPlain // attributes are separated by white space
		}
		key, ok := p.name()
		if !ok {
			return errNotPlain
		}
		p.skipSpace()
		if p.i >= len(p.doc) || p.doc[p.i] != '=' {
			return errNotPlain
		}
		p.i++
		p.skipSpace()
		if p.i >= len(p.doc) || (p.doc[p.i] != '"' && p.doc[p.i] != '\'') {
			return errNotPlain
		}
		q := p.doc[p.i]
		p.i++
		value, err := p.text(q)
		if err != nil {
			return err
		}
		p.i++ // the closing quote
		if el.SelectAttr(key) != nil {
			return errNotPlain // a repeated attribute: etree's rule decides
		}
		el.CreateAttr(key, value)
	}
}

// content reads an element's children up to and including its end tag.
func (p *plainReader) content(el *etree.Element, name string, depth int) error {
	for {
		if p.i >= len(p.doc) {
			return errNotPlain
		}
		if p.doc[p.i] != '<' {
			data, err := p.text('<')
			if err != nil {
				return err
			}
			el.CreateText("").SetData(data)
			continue
		}
		if p.i+1 >= len(p.doc) {
			return errNotPlain
		}
		switch p.doc[p.i+1] {
		case '/':
			p.i += 2
			end, ok := p.name()
			if !ok || end != name {
				return errNotPlain
			}
			p.skipSpace()
			if p.i >= len(p.doc) || p.doc[p.i] != '>' {
				return errNotPlain
			}
			p.i++
			return nil
		case '!', '?':
			return errNotPlain // comments, CDATA, DOCTYPE, instructions
		}
		if err := p.element(el, depth+1); err != nil {
			return err
		}
	}
}

// name reads an ASCII XML name with at most one colon, not at either end.
func (p *plainReader) name() (string, bool) {
	start, colon := p.i, -1
	for p.i < len(p.doc) {
		c := p.doc[p.i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9', c == '-', c == '.':
			if p.i == start || p.i == colon+1 {
				return "", false
			}
		case c == ':':
			if colon >= 0 || p.i == start {
				return "", false
			}
			colon = p.i
		default:
			if p.i == start || p.i == colon+1 {
				return "", false
			}
			return string(p.doc[start:p.i]), true
		}
		p.i++
	}
	return "", false
}

// skipSpace reads white space and reports whether there was any.
func (p *plainReader) skipSpace() bool {
	start := p.i
	for p.i < len(p.doc) && (p.doc[p.i] == ' ' || p.doc[p.i] == '\t' || p.doc[p.i] == '\n') {
		p.i++
	}
	return p.i > start
}

// text reads character data up to stop ('<', or an attribute's quote),
// decoding references; it leaves p.i at stop.
func (p *plainReader) text(stop byte) (string, error) {
	start := p.i
	plain := true
	for p.i < len(p.doc) && p.doc[p.i] != stop {
		c := p.doc[p.i]
		switch {
		case c == '&':
			plain = false
		case c == '\r':
			return "", errNotPlain // line ends are normalized by etree's reader
		case c == '<' || (c == '>' && p.i >= 2 && p.doc[p.i-1] == ']' && p.doc[p.i-2] == ']'):
			return "", errNotPlain
		case c < 0x20 && c != '\t' && c != '\n':
			return "", errNotPlain
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p.doc[p.i:])
			if r == utf8.RuneError || !xmltext.IsChar(r) {
				return "", errNotPlain
			}
			p.i += n - 1
		}
		p.i++
	}
	if p.i >= len(p.doc) {
		return "", errNotPlain
	}
	raw := p.doc[start:p.i]
	if plain {
		return string(raw), nil
	}
	var sb strings.Builder
	sb.Grow(len(raw))
	for i := 0; i < len(raw); {
		if raw[i] != '&' {
			j := i + 1
			for j < len(raw) && raw[j] != '&' {
				j++
			}
			sb.Write(raw[i:j])
			i = j
			continue
		}
		semi := -1
		for j := i + 1; j < len(raw) && j < i+12; j++ {
			if raw[j] == ';' {
				semi = j
				break
			}
		}
		if semi < 0 {
			return "", errNotPlain
		}
		ref := string(raw[i+1 : semi])
		switch ref {
		case "amp":
			sb.WriteByte('&')
		case "lt":
			sb.WriteByte('<')
		case "gt":
			sb.WriteByte('>')
		case "quot":
			sb.WriteByte('"')
		case "apos":
			sb.WriteByte('\'')
		default:
			r, ok := charRef(ref)
			if !ok {
				return "", errNotPlain
			}
			sb.WriteRune(r)
		}
		i = semi + 1
	}
	return sb.String(), nil
}

// charRef decodes "#N" or "#xH" to a character XML allows.
func charRef(ref string) (rune, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	var n uint64
	var err error
	if ref[1] == 'x' {
		if len(ref) < 3 {
			return 0, false
		}
		n, err = strconv.ParseUint(ref[2:], 16, 32)
	} else {
		n, err = strconv.ParseUint(ref[1:], 10, 32)
	}
	if err != nil || n > utf8.MaxRune || !xmltext.IsChar(rune(n)) {
		return 0, false
	}
	return rune(n), true
}
