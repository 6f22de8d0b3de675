package signer

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/russellhaering/goxmldsig/etreeutils"

	"facturad/hacienda/xmltext"
)

// nsXML is the namespace the xml prefix is bound to, never declared.
const nsXML = "http://www.w3.org/XML/1998/namespace"

// errC14NUnsupported means that writeC14N does not handle a tree: the
// caller canonicalizes it the general way instead (goxmldsig).
var errC14NUnsupported = errors.New("not in the subset the direct canonicalizer writes")

// writeC14N appends to out the inclusive Canonical XML 1.0 form (without
// comments) of the subtree at el, taken in its place in its document: the
// apex carries every namespace in scope from its ancestors. skip, when it
// is in the subtree, is left out as the enveloped-signature transform
// leaves out the signature. Nothing is copied or modified.
//
// It writes what goxmldsig's C14N10Rec canonicalizer writes for the same
// element (tested on every element of the test documents and fuzzed), with
// less work: that canonicalizer copies the subtree, and its apex's
// ancestors' declarations, before writing it. For a tree outside what is
// handled here (processing instructions or directives in the subtree, xml:
// attributes on the apex's ancestors, which C14N 1.0 would carry down, a
// prefix with no declaration, a declaration of the xml or xmlns prefix,
// text or an attribute value holding characters XML does not allow, an
// apex that declares again a prefix its ancestors declare, an ancestor that
// undoes the default namespace, an element with attributes of two
// prefixes) it returns errC14NUnsupported
// and writes nothing. goxmldsig then keeps the result as it was. In the
// last three cases its output departs from the specification (an
// ancestor's declaration wins over the apex's own; attributes of different
// namespaces are ordered by local name, not namespace name), which neither
// the service's signatures nor the tax authority's answers meet: their
// apexes, SignedInfo, KeyInfo and SignedProperties, declare nothing that
// their Signature element declares, and no element of either carries
// attributes of two namespaces.
func writeC14N(out *bytes.Buffer, el, skip *etree.Element) error {
	return writeCanonical(out, el, skip, false)
}

// writeExcC14N is writeC14N for Exclusive XML Canonicalization 1.0
// without comments and without an InclusiveNamespaces prefix list: an
// element renders only the namespaces it and its attributes visibly use,
// and only where its nearest output ancestor did not render them already.
// It writes what goxmldsig's exclusive canonicalizer writes for the same
// element (tested as writeC14N is), for the same trees.
func writeExcC14N(out *bytes.Buffer, el, skip *etree.Element) error {
	return writeCanonical(out, el, skip, true)
}

func writeCanonical(out *bytes.Buffer, el, skip *etree.Element, exclusive bool) error {
	scope, err := apexScope(el)
	if err != nil {
		return err
	}
	if err := checkC14NSubtree(el, skip); err != nil {
		return err
	}
	w := c14nWriter{out: out, skip: skip, exclusive: exclusive}
	start := out.Len()
	w.element(el, scope, nil, true)
	if w.err != nil {
		out.Truncate(start)
		return w.err
	}
	return nil
}

// c14n10 returns the inclusive Canonical XML 1.0 form of el in its place
// in its document, without skip (the enveloped signature) when that is not
// nil.
func c14n10(el, skip *etree.Element) ([]byte, error) { return directC14N(el, skip, false) }

// directC14N returns el's inclusive C14N 1.0 form, or with exclusive its
// exclusive C14N form (no prefix list), in its place in its document and
// without skip when that is not nil: the direct writer's, or goxmldsig's
// for a tree the writer leaves to it.
func directC14N(el, skip *etree.Element, exclusive bool) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(2048)
	err := writeCanonical(&b, el, skip, exclusive)
	if err == nil {
		return b.Bytes(), nil
	}
	if !errors.Is(err, errC14NUnsupported) {
		return nil, err
	}
	defer detach(skip)()
	if !exclusive {
		return dsig.MakeC14N10RecCanonicalizer().Canonicalize(el)
	}
	detached, err := detachedCopy(el)
	if err != nil {
		return nil, err
	}
	return dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("").Canonicalize(detached)
}

// detachedCopy returns a copy of el carrying the namespaces in scope from
// its ancestors, for goxmldsig's canonicalizers other than inclusive C14N
// 1.0, which read no ancestors.
func detachedCopy(el *etree.Element) (*etree.Element, error) {
	ctx, err := etreeutils.NSBuildParentContext(el)
	if err != nil {
		return nil, err
	}
	return etreeutils.NSDetatch(ctx, el)
}

// detach takes el, when it is not nil, out of its parent for a
// canonicalizer that cannot leave it out as it writes, and returns what
// puts it back in its place.
func detach(el *etree.Element) (restore func()) {
	if el == nil {
		return func() {}
	}
	parent, at := el.Parent(), el.Index()
	parent.RemoveChildAt(at)
	return func() { parent.InsertChildAt(at, el) }
}

// nsScope maps prefixes ("" for the default namespace) to namespace names.
// An empty default namespace name means none is in effect.
type nsScope map[string]string

// apexScope returns the namespaces in scope at el's parent.
func apexScope(el *etree.Element) (nsScope, error) {
	var chain []*etree.Element
	for p := el.Parent(); p != nil && p.Tag != ""; p = p.Parent() {
		chain = append(chain, p)
	}
	scope := nsScope{}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, a := range chain[i].Attr {
			switch {
			case a.Space == "xml":
				return nil, errC14NUnsupported
			case a.Space == "xmlns":
				if a.Value == "" || a.Key == "xml" || a.Key == "xmlns" {
					return nil, errC14NUnsupported
				}
				scope[a.Key] = a.Value
			case a.Space == "" && a.Key == "xmlns":
				if a.Value == "" {
					return nil, errC14NUnsupported
				}
				scope[""] = a.Value
			}
		}
	}
	for _, a := range el.Attr {
		prefix, ok := "", false
		switch {
		case a.Space == "xmlns":
			prefix, ok = a.Key, true
		case a.Space == "" && a.Key == "xmlns":
			ok = true
		}
		if _, above := scope[prefix]; ok && above {
			return nil, errC14NUnsupported
		}
	}
	return scope, nil
}

// checkC14NSubtree refuses what writeC14N does not write.
func checkC14NSubtree(el, skip *etree.Element) error {
	if el == skip {
		return nil
	}
	prefix := ""
	for _, a := range el.Attr {
		if !xmltext.Check(a.Value).IsZero() {
			return errC14NUnsupported
		}
		switch a.Space {
		case "xmlns":
			if a.Value == "" || a.Key == "xml" || a.Key == "xmlns" {
				return errC14NUnsupported
			}
		case "":
		default:
			if prefix != "" && a.Space != prefix {
				return errC14NUnsupported
			}
			prefix = a.Space
		}
	}
	for _, t := range el.Child {
		switch c := t.(type) {
		case *etree.Element:
			if err := checkC14NSubtree(c, skip); err != nil {
				return err
			}
		case *etree.CharData:
			// Text XML does not allow (a certificate's issuer name
			// may carry a control character into SignedProperties):
			// etree writes it as U+FFFD, and so does goxmldsig, which
			// keeps the digest and the written signature in step.
			if !xmltext.Check(c.Data).IsZero() {
				return errC14NUnsupported
			}
		case *etree.Comment:
		default:
			return errC14NUnsupported
		}
	}
	return nil
}

type c14nWriter struct {
	out       *bytes.Buffer
	skip      *etree.Element
	exclusive bool
	attrs     []c14nAttr // reused between elements
	err       error      // errC14NUnsupported once a prefix has no declaration
}

type c14nAttr struct {
	uri, local string // the sort key: namespace name, then local name
	a          *etree.Attr
}

// element writes el. parent is the scope in effect at el's parent;
// rendered is the set of namespaces the nearest output ancestor rendered
// in scope (nil at the apex, where nothing is rendered yet).
func (w *c14nWriter) element(el *etree.Element, parent nsScope, rendered nsScope, apex bool) {
	scope := parent
	own := false
	for _, a := range el.Attr {
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			if !own {
				scope = make(nsScope, len(parent)+2)
				for k, v := range parent {
					scope[k] = v
				}
				own = true
			}
			if a.Space == "xmlns" {
				scope[a.Key] = a.Value
			} else {
				scope[""] = a.Value
			}
		}
	}

	out := w.out
	out.WriteByte('<')
	writeQName(out, el.Space, el.Tag)

	// Namespace declarations: every one in scope that the nearest output
	// ancestor did not render with the same name, sorted by prefix (the
	// default namespace first).
	// Without declarations of its own an element's scope is its parent's,
	// which the parent rendered.
	var decls []string
	childRendered := scope
	if w.exclusive {
		decls, childRendered = w.exclusiveDecls(el, scope, rendered)
	} else if apex || own {
		for prefix, uri := range scope {
			if prefix == "xml" || (prefix == "" && uri == "") {
				continue
			}
			if prev, ok := rendered[prefix]; ok && prev == uri {
				continue
			}
			decls = append(decls, prefix)
		}
		// xmlns="" undoes a default namespace the output ancestor rendered.
		if rendered[""] != "" && scope[""] == "" {
			decls = append(decls, "")
		}
		slices.Sort(decls)
	}
	if _, ok := scope[el.Space]; !ok && el.Space != "" && el.Space != "xml" {
		w.err = errC14NUnsupported
	}
	for _, prefix := range decls {
		if prefix == "" {
			out.WriteString(` xmlns="`)
		} else {
			out.WriteString(` xmlns:`)
			out.WriteString(prefix)
			out.WriteString(`="`)
		}
		writeC14NEscaped(out, scope[prefix], true)
		out.WriteByte('"')
	}

	// Attributes, by namespace name and then local name; unqualified ones
	// have no namespace name and come first.
	attrs := w.attrs[:0]
	for i := range el.Attr {
		a := &el.Attr[i]
		if a.Space == "xmlns" || (a.Space == "" && a.Key == "xmlns") {
			continue
		}
		uri := ""
		switch a.Space {
		case "":
		case "xml":
			uri = nsXML
		default:
			var ok bool
			if uri, ok = scope[a.Space]; !ok {
				w.err = errC14NUnsupported
			}
		}
		attrs = append(attrs, c14nAttr{uri: uri, local: a.Key, a: a})
	}
	slices.SortFunc(attrs, func(x, y c14nAttr) int {
		if c := strings.Compare(x.uri, y.uri); c != 0 {
			return c
		}
		return strings.Compare(x.local, y.local)
	})
	for _, at := range attrs {
		out.WriteByte(' ')
		writeQName(out, at.a.Space, at.a.Key)
		out.WriteString(`="`)
		writeC14NEscaped(out, at.a.Value, true)
		out.WriteByte('"')
	}
	w.attrs = attrs[:0]
	out.WriteByte('>')

	for _, t := range el.Child {
		switch c := t.(type) {
		case *etree.Element:
			if c == w.skip {
				continue
			}
			w.element(c, scope, childRendered, false)
		case *etree.CharData:
			writeC14NEscaped(out, c.Data, false)
		}
	}
	out.WriteString("</")
	writeQName(out, el.Space, el.Tag)
	out.WriteByte('>')
}

// exclusiveDecls returns the namespace declarations exclusive C14N
// renders on el, sorted, and what its children find rendered: the
// prefixes el and its attributes visibly use whose namespace the output
// ancestors did not render with the same name (xmlns="" where el uses no
// default namespace but one was rendered).
func (w *c14nWriter) exclusiveDecls(el *etree.Element, scope, rendered nsScope) ([]string, nsScope) {
	var decls []string
	use := func(prefix string) {
		if prefix == "xml" || slices.Contains(decls, prefix) {
			return
		}
		uri, inScope := scope[prefix]
		prev, done := rendered[prefix]
		switch {
		case prefix == "" && uri == "":
			if done && prev != "" {
				decls = append(decls, "") // undo the rendered default
			}
		case !inScope:
			w.err = errC14NUnsupported
		case !done || prev != uri:
			decls = append(decls, prefix)
		}
	}
	use(el.Space)
	for _, a := range el.Attr {
		if a.Space != "" && a.Space != "xmlns" {
			use(a.Space)
		}
	}
	if len(decls) == 0 {
		return nil, rendered
	}
	slices.Sort(decls)
	next := make(nsScope, len(rendered)+len(decls))
	for k, v := range rendered {
		next[k] = v
	}
	for _, prefix := range decls {
		next[prefix] = scope[prefix]
	}
	return decls, next
}

func writeQName(out *bytes.Buffer, space, local string) {
	if space != "" {
		out.WriteString(space)
		out.WriteByte(':')
	}
	out.WriteString(local)
}

// writeC14NEscaped writes text or, when attr, an attribute value, escaped
// as Canonical XML does: &, < and carriage returns in both, > in text, and
// the double quote, tabs and line feeds in attribute values.
func writeC14NEscaped(out *bytes.Buffer, s string, attr bool) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '\r':
			esc = "&#xD;"
		case c == '>' && !attr:
			esc = "&gt;"
		case c == '"' && attr:
			esc = "&quot;"
		case c == '\t' && attr:
			esc = "&#x9;"
		case c == '\n' && attr:
			esc = "&#xA;"
		default:
			continue
		}
		out.WriteString(s[last:i])
		out.WriteString(esc)
		last = i + 1
	}
	out.WriteString(s[last:])
}
