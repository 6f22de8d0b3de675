package signer

import (
	"strings"

	"github.com/beevik/etree"
)

// excluded says which ds:Signature elements a reference's transforms take
// out of what it digests.
type excluded int

const (
	excludeNone excluded = iota
	// excludeOwn: the enveloped-signature transform, or an XPath that
	// means the same: the reference's own signature is left out.
	excludeOwn
	// excludeAll: an XPath filter that leaves out every ds:Signature
	// (not(ancestor-or-self::ds:Signature), the EU DSS library's): the
	// document as it was before anyone signed it.
	excludeAll
)

// transformPlan is what a reference's ds:Transforms ask for: which
// signatures to leave out, then which canonicalization (with its
// InclusiveNamespaces prefix list) to write the rest with.
type transformPlan struct {
	exclude  excluded
	c14nAlg  string
	prefixes string
}

// readTransforms reads a reference's transforms. Only the transforms
// signers of Costa Rican documents are seen to use are understood
// (docs/design/signer.md, "What Verify accepts"): the enveloped-signature
// transform, the XPath filters that mean the same or leave out every
// signature, and the canonicalizations; anything else is refused, never
// skipped. A selection must come before the canonicalization, as every
// signer writes them.
func readTransforms(ts []*etree.Element) (transformPlan, error) {
	plan := transformPlan{c14nAlg: AlgorithmC14N10}
	if len(ts) > maxTransforms {
		return plan, invalid("%d transforms", len(ts))
	}
	canonicalized := false
	for _, t := range ts {
		if t.Tag != "Transform" || t.NamespaceURI() != NamespaceDS {
			return plan, invalid("unexpected element %s in ds:Transforms", t.FullTag())
		}
		alg := t.SelectAttrValue("Algorithm", "")
		if _, ok := canonicalizations[alg]; ok {
			if canonicalized {
				return plan, invalid("two canonicalizations")
			}
			canonicalized = true
			plan.c14nAlg, plan.prefixes = alg, inclusivePrefixes(t)
			continue
		}
		if canonicalized {
			return plan, invalid("transform %q after the canonicalization", alg)
		}
		var ex excluded
		switch alg {
		case AlgorithmEnveloped:
			ex = excludeOwn
		case AlgorithmXPathFilter:
			var err error
			if ex, err = xpathFilter(t); err != nil {
				return plan, err
			}
		case AlgorithmXPathFilter2:
			var err error
			if ex, err = xpathFilter2(t); err != nil {
				return plan, err
			}
		default:
			return plan, invalid("unsupported transform %q", alg)
		}
		plan.exclude = max(plan.exclude, ex)
	}
	return plan, nil
}

// inclusivePrefixes returns the PrefixList of an exclusive
// canonicalization's ec:InclusiveNamespaces child, if any.
func inclusivePrefixes(t *etree.Element) string {
	for _, in := range t.ChildElements() {
		if in.Tag == "InclusiveNamespaces" {
			return in.SelectAttrValue("PrefixList", "")
		}
	}
	return ""
}

// xpathFilter reads an XPath filter transform (XMLDSig §6.6.3). Its
// expression is not evaluated: it is recognized, after its white space is
// dropped and its prefix is checked to name the XMLDSig namespace, as one
// of the two forms signers write:
//
//	not(ancestor-or-self::ds:Signature)             every signature left out
//	count(ancestor-or-self::ds:Signature |
//	      here()/ancestor::ds:Signature[1]) >
//	count(ancestor-or-self::ds:Signature)           this signature left out
//
// Any other expression is refused.
func xpathFilter(t *etree.Element) (excluded, error) {
	var x *etree.Element
	for _, c := range t.ChildElements() {
		if c.Tag == "XPath" && c.NamespaceURI() == NamespaceDS {
			if x != nil {
				return excludeNone, invalid("XPath transform with two ds:XPath")
			}
			x = c
		}
	}
	if x == nil {
		return excludeNone, invalid("XPath transform without ds:XPath")
	}
	if ex, ok := matchForm(x, xpathForms); ok {
		return ex, nil
	}
	return excludeNone, invalid("unsupported XPath filter %q", strings.TrimSpace(x.Text()))
}

// xpathForm is an expression a filter is recognized as: its shape, white
// space dropped, with P for the XMLDSig prefix, and what it leaves out.
type xpathForm struct {
	shape string
	ex    excluded
}

// The expressions of the XPath filters (xpathFilter) and of XPath Filter
// 2.0's subtract (xpathFilter2).
var (
	xpathForms = []xpathForm{
		{"not(ancestor-or-self::P:Signature)", excludeAll},
		{"count(ancestor-or-self::P:Signature|here()/ancestor::P:Signature[1])>count(ancestor-or-self::P:Signature)", excludeOwn},
	}
	xpathFilter2Forms = []xpathForm{
		{"/descendant::P:Signature", excludeAll},
		{"//P:Signature", excludeAll},
		{"here()/ancestor::P:Signature[1]", excludeOwn},
	}
)

// matchForm recognizes the expression of x, white space dropped, as one
// of forms whose prefix x binds to the XMLDSig namespace.
func matchForm(x *etree.Element, forms []xpathForm) (excluded, bool) {
	expr := strings.Join(strings.Fields(x.Text()), "")
	for _, f := range forms {
		if prefix, ok := matchPrefixed(expr, f.shape); ok && lookupPrefix(x, prefix) == NamespaceDS {
			return f.ex, true
		}
	}
	return excludeNone, false
}

// xpathFilter2 reads an XPath Filter 2.0 transform: one subtract filter
// of every signature (/descendant::ds:Signature, //ds:Signature) or of its
// own (here()/ancestor::ds:Signature[1]).
func xpathFilter2(t *etree.Element) (excluded, error) {
	xs := t.ChildElements()
	if len(xs) != 1 || xs[0].Tag != "XPath" || xs[0].NamespaceURI() != AlgorithmXPathFilter2 ||
		xs[0].SelectAttrValue("Filter", "") != "subtract" {
		return excludeNone, invalid("unsupported XPath Filter 2.0: only one subtract of the signatures is understood")
	}
	if ex, ok := matchForm(xs[0], xpathFilter2Forms); ok {
		return ex, nil
	}
	return excludeNone, invalid("unsupported XPath Filter 2.0 expression %q", strings.TrimSpace(xs[0].Text()))
}

// matchPrefixed reports whether expr is shape with every "P" (the prefix
// placeholder) replaced by one same prefix, and returns that prefix.
func matchPrefixed(expr, shape string) (string, bool) {
	first, _, ok := strings.Cut(shape, "P:")
	if !ok || !strings.HasPrefix(expr, first) {
		return "", false
	}
	rest := expr[len(first):]
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 {
		return "", false
	}
	prefix := rest[:colon]
	for _, r := range prefix {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", false
		}
	}
	return prefix, strings.ReplaceAll(shape, "P:", prefix+":") == expr
}

// lookupPrefix returns the namespace prefix is bound to at el.
func lookupPrefix(el *etree.Element, prefix string) string {
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if a.Space == "xmlns" && a.Key == prefix {
				return a.Value
			}
		}
	}
	return ""
}
