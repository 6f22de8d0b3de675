package hacienda

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"facturad/hacienda/msg"
	"facturad/hacienda/xmltext"
)

// bodyPath is the field path of problems with the request body as a whole
// (empty, not JSON, not an object): the gateway's name for it too.
const bodyPath = "body"

// decodeBody decodes a JSON object body into v, a pointer to a request
// struct. With names set, decoding is strict: every name of the body must
// be one of names' objects (see request_names.go).
//
// A body that is empty, not JSON or not an object is returned as err, a
// *ValidationError on "body". Values of the wrong JSON type for their field
// do not stop decoding: each is reported in found on its exact path
// (detalleServicio[1].impuesto[0].codigo, ReceptorRequest.Nombre), with
// the names refused, and v holds the rest of the body, every such value
// read as absent, so that the caller can report the other problems with
// them.
//
// A well-formed body costs one json.Unmarshal and one scan of its names;
// only a body the decoder refuses is read a second time, into a generic
// tree that is compared with the request's Go type.
func decodeBody(body []byte, v any, names *objectNames) (found *ValidationError, err error) {
	body = bytes.TrimSpace(body)
	var e errs
	if len(body) == 0 {
		e.add(bodyPath, msg.BodyEmpty.With())
		return nil, e.err()
	}
	if body[0] != '{' {
		e.add(bodyPath, msg.BodyNotObject.With())
		return nil, e.err()
	}
	// The decoder would replace invalid UTF-8 and unpaired surrogate
	// escapes with U+FFFD without a word, and the document would carry
	// text the caller never sent.
	problem, nonChar := xmltext.ScanJSON(body)
	if !problem.IsZero() {
		e.add(bodyPath, problem)
		return nil, e.err()
	}
	uerr := json.Unmarshal(body, v)
	var se *json.SyntaxError
	switch {
	case uerr == nil:
		if nonChar {
			found = textErrors(body, v)
		}
	case errors.As(uerr, &se):
		e.add(bodyPath, msg.BodyInvalidJSON.With(se.Offset))
		return nil, e.err()
	default:
		found, err = retypeBody(body, v, uerr)
	}
	if names != nil {
		// The body is valid JSON: the decoder checks it whole first.
		if bad := checkNames(body, names); bad != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				return nil, mergeErrors(ve, bad)
			}
			found = mergeErrors(found, bad)
		}
	}
	return found, err
}

// mergeErrors adds the problems of b to a (either may be nil).
func mergeErrors(a, b *ValidationError) *ValidationError {
	if a == nil {
		return b
	}
	for _, p := range b.Paths() {
		for _, m := range b.Fields[p] {
			a.Add(p, m)
		}
	}
	return a
}

// retypeBody finds every value of body whose JSON type its field in v's
// type does not take, and decodes the rest of the body into v. uerr is the
// decoder's own error, reported as it stands should the walk find nothing
// (the walk and the decoder disagree: a duplicated key, say).
func retypeBody(body []byte, v any, uerr error) (*ValidationError, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, decoderError(nil, uerr)
	}
	rv := reflect.ValueOf(v).Elem()
	w := typeWalk{text: true}
	tree = w.value(tree, rv.Type(), "", false)
	if w.e.ok() {
		return nil, decoderError(nil, uerr)
	}
	clean, err := json.Marshal(tree)
	if err == nil {
		rv.SetZero()
		err = json.Unmarshal(clean, v)
	}
	if err != nil {
		// Not expected: every mistyped value was replaced by null.
		return nil, decoderError(w.e.v, err)
	}
	return w.e.v, nil
}

// decoderError reports the decoder's error as a *ValidationError, with
// the field path the decoder gives (which has no array indexes), next to
// the problems already found.
func decoderError(found *ValidationError, err error) error {
	e := errs{v: found}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		e.add(decodeErrorPath(te.Field), msg.WrongJSONType.With(jsonKind(te.Type.Kind()), jsonGot(te.Value)))
	} else {
		e.add(bodyPath, msg.BodyUnreadable.With())
	}
	return e.err()
}

// withTypeErrors merges the type errors with the problems found in the
// rest of the body. A problem on a path that has a type error, or inside
// it, is dropped: it only says that the value read as absent is missing.
func withTypeErrors(typeErrs, others *ValidationError) error {
	out := &ValidationError{Message: DefaultValidationMessage, Fields: make(map[string][]msg.Message, typeErrs.Len()+others.Len())}
	for p, msgs := range typeErrs.FieldMessages() {
		out.Fields[p] = slices.Clone(msgs)
	}
	for p, msgs := range others.FieldMessages() {
		if coveredBy(p, typeErrs) {
			continue
		}
		for _, m := range msgs {
			out.Add(p, m)
		}
	}
	return out
}

// coveredBy reports whether path is a path of typeErrs or lies inside one.
func coveredBy(path string, typeErrs *ValidationError) bool {
	for p := range typeErrs.Fields {
		if path == p {
			return true
		}
		if strings.HasPrefix(path, p) && (path[len(p)] == '.' || path[len(p)] == '[') {
			return true
		}
	}
	return false
}

// decodeErrorPath turns the decoder's dotted field path into the
// contract's, as far as it can without indexes: the embedded body drops
// out, the receptor is named ReceptorRequest with PascalCase fields. Used
// only when the walk of the body found nothing.
func decodeErrorPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if p != "DocumentBody" && p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return bodyPath
	}
	if strings.EqualFold(out[0], "receptor") {
		out[0] = receptorPath
		for i := 1; i < len(out); i++ {
			out[i] = upperFirst(out[i])
		}
	}
	return strings.Join(out, ".")
}

// receptorPath names the receptor object in field paths.
const receptorPath = "ReceptorRequest"

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// jsonKind names the JSON type a Go kind decodes from.
func jsonKind(k reflect.Kind) msg.Message {
	switch k {
	case reflect.String:
		return msg.JSONWantString.With()
	case reflect.Slice, reflect.Array:
		return msg.JSONWantArray.With()
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return msg.JSONWantObject.With()
	case reflect.Bool:
		return msg.JSONWantBoolean.With()
	default:
		return msg.JSONWantNumber.With()
	}
}

// jsonGot names the JSON value the decoder describes as v ("string",
// "number 1e400", "bool", "array", "object").
func jsonGot(v string) msg.Message {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return msg.JSONGotString.With()
	case "bool":
		return msg.JSONGotBoolean.With()
	case "array":
		return msg.JSONGotArray.With()
	case "object":
		return msg.JSONGotObject.With()
	case "null":
		return msg.JSONGotNull.With()
	}
	return msg.JSONGotNumber.With()
}

// looseRule says what a type with its own UnmarshalJSON takes, where that
// differs from what its Go kind would take.
type looseRule struct {
	// anyValue: any JSON value decodes (it is kept for validation).
	anyValue bool
	// scalarOK: any value but an object decodes as text; an object is
	// checked field by field.
	scalarOK bool
	// anyKeys are object keys (matched in any case) whose value may be any
	// JSON value; they include accepted spellings that are no Go field.
	anyKeys []string
}

// looseTypes lists every type reachable from the request structs that has
// its own UnmarshalJSON (a test keeps the list complete).
var looseTypes = map[reflect.Type]looseRule{
	reflect.TypeFor[Amount]():     {anyValue: true},
	reflect.TypeFor[FlexString](): {anyValue: true},
	// An object's codigoPais and numTelefono, and any other value, are
	// read as text.
	reflect.TypeFor[Telefono]():    {anyValue: true},
	reflect.TypeFor[OtroTexto]():   {scalarOK: true},
	reflect.TypeFor[Exoneracion](): {anyKeys: []string{"fechaEmisionEX", "articulo", "inciso"}},
	reflect.TypeFor[InformacionReferencia](): {anyKeys: []string{
		"tipoDocIR", "tipoDoc", "numero", "fechaEmisionIR", "fechaEmision", "codigo"}},
	reflect.TypeFor[Ubicacion](): {anyKeys: []string{"provincia", "canton", "distrito", "barrio"}},
}

// typeWalk compares a generic JSON tree (numbers as json.Number) with the
// Go type it is decoded into, the way encoding/json matches them, and
// collects every mismatch on its contract path. With text set it also
// reports every string an XML document cannot carry.
type typeWalk struct {
	e    errs
	text bool
}

// textErrors walks a body that decoded well and reports, on their contract
// paths, the strings an XML document cannot carry; nil when there are none.
func textErrors(body []byte, v any) *ValidationError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil {
		return nil
	}
	w := typeWalk{text: true}
	w.value(tree, reflect.ValueOf(v).Elem().Type(), "", false)
	return w.e.v
}

// value checks v against t at path and returns v, or nil (absent) when v
// cannot be decoded into t. pascal is set inside the receptor, whose paths
// use PascalCase names.
func (w *typeWalk) value(v any, t reflect.Type, path string, pascal bool) any {
	if v == nil {
		return nil // null decodes into anything
	}
	if s, ok := v.(string); ok && w.text {
		if problem := xmltext.Check(s); !problem.IsZero() {
			w.e.add(path, problem)
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	rule, loose := looseTypes[t]
	if loose {
		if rule.anyValue {
			return v
		}
		if _, isObject := v.(map[string]any); rule.scalarOK && !isObject {
			return v
		}
	}
	switch t.Kind() {
	case reflect.Interface:
		return v
	case reflect.String:
		if _, ok := v.(string); !ok {
			return w.wrong(path, msg.JSONWantString, v)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return w.wrong(path, msg.JSONWantBoolean, v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return w.wrong(path, msg.JSONWantNumber, v)
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowInt(i) {
			w.e.add(path, msg.WholeNumberRange.With(truncateForError(string(n))))
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return w.wrong(path, msg.JSONWantNumber, v)
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || reflect.New(t).Elem().OverflowUint(u) {
			w.e.add(path, msg.WholeNumberRange.With(truncateForError(string(n))))
			return nil
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return w.wrong(path, msg.JSONWantNumber, v)
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			w.e.add(path, msg.NumberRange.With(truncateForError(string(n))))
			return nil
		}
	case reflect.Slice, reflect.Array:
		a, ok := v.([]any)
		if !ok {
			return w.wrong(path, msg.JSONWantArray, v)
		}
		for i := range a {
			a[i] = w.value(a[i], t.Elem(), idx(path, i), pascal)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return w.wrong(path, msg.JSONWantObject, v)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			m[k] = w.value(m[k], t.Elem(), joinPath(path, k, pascal), pascal)
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return w.wrong(path, msg.JSONWantObject, v)
		}
		w.object(m, t, rule.anyKeys, path, pascal)
	}
	return v
}

// object checks the members of m against the fields of struct type t.
// Keys are matched as encoding/json matches them: the exact name first,
// then any case; keys matching no field are ignored.
func (w *typeWalk) object(m map[string]any, t reflect.Type, anyKeys []string, path string, pascal bool) {
	fields := jsonFields(t)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.ContainsFunc(anyKeys, func(a string) bool { return strings.EqualFold(a, k) }) {
			continue
		}
		f, ok := findField(fields, k)
		if !ok {
			continue
		}
		ft := f.typ
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == reflect.TypeFor[ReceptorRequest]() {
			m[k] = w.value(m[k], f.typ, receptorPath, true)
			continue
		}
		m[k] = w.value(m[k], f.typ, joinPath(path, f.name, pascal), pascal)
	}
}

// wrong records a value of the wrong JSON type and drops it.
func (w *typeWalk) wrong(path string, want *msg.Entry, got any) any {
	w.e.add(path, msg.WrongJSONType.With(want.With(), describeJSON(got)))
	return nil
}

// describeJSON names the JSON type of a generic value.
func describeJSON(v any) msg.Message {
	switch v.(type) {
	case string:
		return msg.JSONGotString.With()
	case json.Number:
		return msg.JSONGotNumber.With()
	case bool:
		return msg.JSONGotBoolean.With()
	case []any:
		return msg.JSONGotArray.With()
	case map[string]any:
		return msg.JSONGotObject.With()
	default:
		return msg.JSONGotNull.With()
	}
}

func joinPath(base, name string, pascal bool) string {
	if pascal {
		name = upperFirst(name)
	}
	if base == "" {
		return name
	}
	return base + "." + name
}

// jsonField is a field of a struct as encoding/json sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

var jsonFieldCache sync.Map // reflect.Type → []jsonField

// jsonFields lists the JSON fields of struct type t: exported fields under
// their tag name (or Go name), the fields of untagged embedded structs
// promoted unless a shallower field has the name already.
func jsonFields(t reflect.Type) []jsonField {
	if f, ok := jsonFieldCache.Load(t); ok {
		return f.([]jsonField)
	}
	var fields []jsonField
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fields = append(fields, jsonField{name: name, typ: sf.Type})
	}
	for _, et := range embedded {
		for _, f := range jsonFields(et) {
			if !slices.ContainsFunc(fields, func(g jsonField) bool { return g.name == f.name }) {
				fields = append(fields, f)
			}
		}
	}
	jsonFieldCache.Store(t, fields)
	return fields
}

func findField(fields []jsonField, key string) (jsonField, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}
