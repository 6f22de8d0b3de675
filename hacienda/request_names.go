package hacienda

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"facturad/hacienda/msg"
	"facturad/hacienda/spelling"
)

// The names a request body may hold. Decoding is strict: a name that is no
// field of its object, a computed amount sent as if the caller could set
// it, or one field named twice is refused on its exact path, every one at
// once, with the body's other problems. A misspelt name would otherwise be
// left out without a word and change the document ("montoDescuento" on a
// line instead of a descuento takes no discount). Names still match
// without regard to case, as encoding/json matches them (bytes.EqualFold),
// and the older spellings the contract lists (tipoDoc, fechaEmision of a
// reference) are names of their field.

// The messages of the names a body may not hold, which the other decoders
// of the service (the tenancy calls, the received documents, the void and
// the payment) give too, are the catalogue's (msg.UnknownField,
// msg.ComputedField, msg.ServiceField, msg.RepeatedField and their kin).

// UnknownFieldMessage is the message of the name given, which its object
// does not have: it suggests the name of known closest to it (see
// spelling.Nearest), if any, or the field an older spelling in aliases
// (older spelling → the field's name) close to it names.
func UnknownFieldMessage(given string, known []string, aliases map[string]string) msg.Message {
	names := known
	if len(aliases) > 0 {
		names = append(slices.Clone(known), slices.Sorted(maps.Keys(aliases))...)
	}
	near := spelling.Nearest(given, names)
	if name, ok := aliases[near]; ok {
		near = name
	}
	if near != "" {
		return msg.UnknownFieldNear.With(near)
	}
	return msg.UnknownField.With()
}

// RepeatedFieldMessage is the message of one field given under the names
// spellings, in the body's order: the names match without regard to case,
// and an older spelling names its field too.
func RepeatedFieldMessage(spellings []string) msg.Message {
	if len(slices.Compact(slices.Clone(spellings))) == 1 {
		return msg.RepeatedField.With()
	}
	return msg.RepeatedFieldAs.With(strings.Join(spellings, " and "))
}

// objectNames is what one JSON object of a request may hold: the fields of
// the Go type it is decoded into.
type objectNames struct {
	fields []fieldName
	// exact finds a field by its name as spelled (its own or an older
	// one); a name matching none is looked for without regard to case.
	exact map[string]int
	// known are the names suggested for a misspelt one: every field's
	// own name, the computed ones left out; and the older spellings
	// (older → the field's name), whose field is suggested.
	known   []string
	aliases map[string]string
	// slots is the number of distinct fields (aliases share a slot).
	slots int
}

// fieldName is one name of an object's field.
type fieldName struct {
	// name is the spelling of the field's path in errors: the field's own
	// name, also for an older spelling.
	name string
	// spelling is how this name is written (name, or an older spelling).
	spelling string
	// slot is the field: two names with one slot are one field.
	slot int
	// index is the name's place in its object's fields.
	index int
	// computed, when set, refuses a value other than null or "": the
	// amount is the service's to compute.
	computed bool
	// obj is what an object value (of an array, each object element)
	// may hold; nil when the value is not looked into.
	obj   *objectNames
	array bool
	// receptor names the path of the receptor object: ReceptorRequest,
	// then PascalCase names.
	receptor bool
}

// lookup finds the field named key, as encoding/json does: the exact
// spelling, else any name equal under Unicode case folding.
func (o *objectNames) lookup(key []byte) (*fieldName, bool) {
	return o.lookupAfter(key, -1)
}

// lookupAfter is lookup trying first the field after the one at prev
// (-1: none): a body written from a struct names the fields in order.
func (o *objectNames) lookupAfter(key []byte, prev int) (*fieldName, bool) {
	if n := prev + 1; n < len(o.fields) && o.fields[n].spelling == string(key) {
		return &o.fields[n], true
	}
	if i, ok := o.exact[string(key)]; ok {
		return &o.fields[i], true
	}
	for i := range o.fields {
		if equalFoldBytes(o.fields[i].spelling, key) {
			return &o.fields[i], true
		}
	}
	return nil, false
}

// equalFoldBytes is strings.EqualFold of s, an ASCII name, and b, without
// converting b when it is ASCII too.
func equalFoldBytes(s string, b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			// K (Kelvin) and ſ (long s) fold to ASCII letters.
			return strings.EqualFold(s, string(b))
		}
	}
	if len(s) != len(b) {
		return false
	}
	for i := range len(b) {
		c, d := s[i], b[i]
		if c != d && (c|0x20 != d|0x20 || c|0x20 < 'a' || c|0x20 > 'z') {
			return false
		}
	}
	return true
}

// nameRules says how a type with its own UnmarshalJSON is read, for every
// such type reachable from the request structs (a test keeps the list
// complete): as a value not looked into (leaf), or as an object of its Go
// fields and of the older spellings in aliases (older name → field name).
var nameRules = map[reflect.Type]struct {
	leaf    bool
	aliases map[string]string
}{
	reflect.TypeFor[Amount]():      {leaf: true},
	reflect.TypeFor[time.Time]():   {leaf: true},
	reflect.TypeFor[Exoneracion](): {},
	reflect.TypeFor[InformacionReferencia](): {aliases: map[string]string{
		"tipoDoc": "tipoDocIR", "fechaEmision": "fechaEmisionIR"}},
	reflect.TypeFor[Ubicacion](): {},
	reflect.TypeFor[Telefono]():  {},
	reflect.TypeFor[OtroTexto](): {},
}

// computedNames are the fields of the model the service always computes:
// a value sent is refused (docs/decisions-v44.md, 158). The amounts a
// caller may give in some documents only (a line's montoTotal and
// subTotal, baseImponible) are checked once the body is read
// (givenComputed).
var computedNames = map[reflect.Type][]string{
	reflect.TypeFor[LineaDetalle](): {"impuestoAsumidoEmisorFabrica", "impuestoNeto", "montoTotalLinea"},
	reflect.TypeFor[Impuesto]():     {"monto"},
	reflect.TypeFor[Exoneracion]():  {"montoExoneracion"},
	reflect.TypeFor[ResumenFactura](): {"totalServGravados", "totalServExentos", "totalServExonerado", "totalServNoSujeto",
		"totalMercanciasGravadas", "totalMercanciasExentas", "totalMercExonerada", "totalMercNoSujeta",
		"totalGravado", "totalExento", "totalExonerado", "totalNoSujeto", "totalVenta", "totalDescuentos",
		"totalVentaNeta", "totalDesgloseImpuesto", "totalImpuesto", "totalImpAsumEmisorFabrica",
		"totalIVADevuelto", "totalOtrosCargos", "totalComprobante"},
}

var namesCache sync.Map // reflect.Type → *objectNames

// namesOf returns the names of struct type t (cached).
func namesOf(t reflect.Type) *objectNames {
	if o, ok := namesCache.Load(t); ok {
		return o.(*objectNames)
	}
	o := buildNames(t)
	actual, _ := namesCache.LoadOrStore(t, o)
	return actual.(*objectNames)
}

func buildNames(t reflect.Type) *objectNames {
	o := &objectNames{exact: map[string]int{}}
	computed := computedNames[t]
	for _, jf := range jsonFields(t) {
		f := fieldName{name: jf.name, spelling: jf.name, slot: o.slots, computed: slices.Contains(computed, jf.name)}
		o.slots++
		ft := jf.typ
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
			f.array = true
			ft = ft.Elem()
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
		}
		if ft == reflect.TypeFor[ReceptorRequest]() {
			f.receptor = true
		}
		if ft.Kind() == reflect.Struct {
			rule, custom := nameRules[ft]
			if !custom && reflect.PointerTo(ft).Implements(reflect.TypeFor[json.Unmarshaler]()) {
				panic("hacienda: no name rule for " + ft.String() + ", which reads itself")
			}
			if !rule.leaf {
				f.obj = namesOf(ft)
			}
		}
		o.add(f)
		if !f.computed {
			o.known = append(o.known, f.name)
		}
	}
	aliases := nameRules[t].aliases
	o.aliases = aliases
	for _, old := range slices.Sorted(maps.Keys(aliases)) {
		f := o.fields[o.exact[aliases[old]]]
		f.spelling = old
		o.add(f)
	}
	for _, f := range o.fields {
		for _, c := range []byte(f.spelling) {
			if c >= 0x80 {
				panic("hacienda: a name that is not ASCII: " + f.spelling)
			}
		}
	}
	if o.slots > 64 {
		panic("hacienda: more than 64 fields in " + t.String())
	}
	return o
}

func (o *objectNames) add(f fieldName) {
	f.index = len(o.fields)
	o.exact[f.spelling] = len(o.fields)
	o.fields = append(o.fields, f)
}

// within finds a field named key (without regard to case) in the objects
// within o, up to depth levels down, and returns its path relative to o
// (descuento, resumenFactura.codigoTipoMoneda) and whether it is
// computed; "" when there is none. The shallowest wins, then the first in
// the model's order.
func (o *objectNames) within(key string, depth int) (rel string, computed bool) {
	type level struct {
		o   *objectNames
		rel string
	}
	cur := []level{{o, ""}}
	for range depth {
		var next []level
		for _, l := range cur {
			for i := range l.o.fields {
				f := &l.o.fields[i]
				if f.obj == nil || f.spelling != f.name {
					continue
				}
				rel := f.name
				if l.rel != "" {
					rel = l.rel + "." + f.name
				}
				if g, ok := f.obj.lookup([]byte(key)); ok {
					return rel, g.computed
				}
				next = append(next, level{f.obj, rel})
			}
		}
		cur = next
	}
	return "", false
}

// unknownMessage is the message of key, a name o does not have.
func (o *objectNames) unknownMessage(key string) msg.Message {
	if rel, computed := o.within(key, 2); rel != "" {
		if computed {
			return msg.ComputedField.With()
		}
		return msg.MisplacedField.With(rel)
	}
	return UnknownFieldMessage(key, o.known, o.aliases)
}

// pathSeg is one step of a path: a name, or an index when name is "".
type pathSeg struct {
	name  string
	index int
}

// nameScan walks a body that is valid JSON against the names of the
// objects it holds, collecting each problem on its path.
type nameScan struct {
	b []byte
	i int
	// segs[:depth] is the path of the value being read. The objects
	// looked into nest no deeper than the request types do.
	segs  [maxNameDepth]pathSeg
	depth int
	// pascal is the depth of segs from which names are PascalCase (the
	// receptor's), or -1.
	pascal int
	e      errs
}

// maxNameDepth bounds the path of an object looked into (a test checks
// the request types against it).
const maxNameDepth = 16

// CheckNames checks the names of body, a JSON object read into a value of
// struct type t (a struct, not a pointer to one), as [DecodeSendRequest] checks a send body's: it returns
// a *ValidationError naming, on its path, every name that is no field of
// its object (the closest suggested), every computed amount and every
// field given twice; or nil. It serves the other calls' bodies (a void, a
// payment, the fields of a re-issue, which are a send body's). A body
// that is not a JSON object is not its to judge: nil.
func CheckNames(body []byte, t reflect.Type) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || !json.Valid(body) {
		return nil
	}
	if bad := checkNames(body, namesOf(t)); bad != nil {
		return bad
	}
	return nil
}

// checkNames reports, on their paths, the names of body (valid JSON) that
// the objects of names do not take; nil when there are none.
func checkNames(body []byte, names *objectNames) *ValidationError {
	s := nameScan{b: body, pascal: -1}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '{' {
		s.object(names)
	}
	return s.e.v
}

// push enters the value named name (an index when name is "").
func (s *nameScan) push(name string, index int) {
	if s.depth == maxNameDepth {
		panic("hacienda: request names nest deeper than maxNameDepth")
	}
	s.segs[s.depth] = pathSeg{name: name, index: index}
	s.depth++
}

// path renders the current path, with name appended.
func (s *nameScan) path(name string) string {
	var b strings.Builder
	for d, sg := range s.segs[:s.depth] {
		if sg.name == "" {
			b.WriteString("[" + strconv.Itoa(sg.index) + "]")
			continue
		}
		if d > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.pascalName(d, sg.name))
	}
	if s.depth > 0 {
		b.WriteByte('.')
	}
	b.WriteString(s.pascalName(s.depth, name))
	return b.String()
}

// pascalName is name at depth d of the path: PascalCase inside the
// receptor.
func (s *nameScan) pascalName(d int, name string) string {
	if s.pascal >= 0 && d > s.pascal {
		return upperFirst(name)
	}
	return name
}

func (s *nameScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object reads the object at s.i against o.
func (s *nameScan) object(o *objectNames) {
	s.i++ // {
	var seen uint64
	var first [64]int32 // where each field's first name starts, for a repeat
	prev := -1          // the index in o.fields of the name before
	for s.next('}') {
		start := s.i
		key := s.key()
		s.ws()
		s.i++ // :
		s.ws()
		f, ok := o.lookupAfter(key, prev)
		switch {
		case !ok:
			k := string(key)
			s.e.add(s.path(k), o.unknownMessage(k))
			s.skip()
			continue
		case seen&(1<<f.slot) != 0:
			s.repeated(f, int(first[f.slot]), start)
			s.skip()
			continue
		}
		seen |= 1 << f.slot
		first[f.slot] = int32(start)
		prev = f.index
		if f.computed {
			if !s.nullOrEmpty() {
				s.e.add(s.path(f.name), msg.ComputedField.With())
			}
			s.skip()
			continue
		}
		s.value(f)
	}
}

// repeated reports the field f, named at a and again at b (the offsets of
// the names in the body), and every name of it in the object.
func (s *nameScan) repeated(f *fieldName, a, b int) {
	spell := func(at int) string {
		t := nameScan{b: s.b, i: at}
		return string(t.key())
	}
	p := s.path(f.name)
	// A name given a third time repeats the message, which add keeps
	// once.
	s.e.add(p, RepeatedFieldMessage([]string{spell(a), spell(b)}))
}

// value reads the value of field f at s.i.
func (s *nameScan) value(f *fieldName) {
	c := s.b[s.i]
	if f.obj == nil || (c != '{' && c != '[') || (c == '[') != f.array {
		s.skip()
		return
	}
	name := f.name
	pascal := s.pascal
	if f.receptor {
		name, s.pascal = receptorPath, s.depth
	}
	s.push(name, 0)
	if c == '{' {
		s.object(f.obj)
	} else {
		s.array(f.obj)
	}
	s.depth--
	s.pascal = pascal
}

// array reads the array at s.i, each object element against o.
func (s *nameScan) array(o *objectNames) {
	s.i++ // [
	for n := 0; s.next(']'); n++ {
		if s.b[s.i] != '{' {
			s.skip()
			continue
		}
		s.push("", n)
		s.object(o)
		s.depth--
	}
}

// next moves to the next member of the object or array being read, past
// a comma, and reports whether there is one; at end, its closing '}' or
// ']', it moves past it and reports false.
func (s *nameScan) next(end byte) bool {
	s.ws()
	if s.b[s.i] == end {
		s.i++
		return false
	}
	if s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	return true
}

// key reads the string at s.i, an object's name, and returns it unescaped.
func (s *nameScan) key() []byte {
	start := s.i + 1
	escaped := false
	for s.i = start; s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			escaped = true
			s.i++
		}
	}
	s.i++
	raw := s.b[start : s.i-1]
	if !escaped {
		return raw
	}
	var k string
	if err := json.Unmarshal(s.b[start-1:s.i], &k); err != nil {
		return raw // not expected: the body is valid JSON
	}
	return []byte(k)
}

// nullOrEmpty reports whether the value at s.i is null or "", which send
// no amount.
func (s *nameScan) nullOrEmpty() bool {
	r := s.b[s.i:]
	return len(r) >= 4 && string(r[:4]) == "null" || len(r) >= 2 && r[0] == '"' && r[1] == '"'
}

// skip moves past the value at s.i.
func (s *nameScan) skip() {
	depth := 0
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
			if depth == 0 {
				s.i++
				return
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return
			}
			if depth < 0 { // the end of the enclosing value: not expected
				return
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return
			}
		}
	}
}

// givenComputed reports, on their paths, the amounts of the lines of body
// that the service computes in a document of type t and that the caller
// sent: montoTotal and subTotal but in a payment receipt, baseImponible
// but where the caller may give it (calc's lineCalc.base).
func givenComputed(t DocumentType, lines []LineaDetalle, e *errs) {
	for i := range lines {
		l := &lines[i]
		if t != TypeREP {
			if l.MontoTotal.IsSet() {
				e.add(idx("detalleServicio", i)+".montoTotal", msg.ComputedUnlessREP.With())
			}
			if l.SubTotal.IsSet() {
				e.add(idx("detalleServicio", i)+".subTotal", msg.ComputedUnlessREP.With())
			}
		}
		if l.BaseImponible.IsSet() && !baseImponibleEditable(l) {
			e.add(idx("detalleServicio", i)+".baseImponible", msg.ComputedBaseUnless.With())
		}
	}
}

// baseImponibleEditable reports whether the caller may give the line's
// BaseImponible: with IVACobradoFabrica 01, or an IVA of code 07.
func baseImponibleEditable(l *LineaDetalle) bool {
	if l.IVACobradoFabrica == IVAFabricaSeparado {
		return true
	}
	return slices.ContainsFunc(l.Impuesto, func(tx Impuesto) bool { return tx.Codigo == ImpuestoIVAEspecial })
}
