package hacienda

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzNamesNeverChangeAmounts: a valid body whose names are changed (a
// name's case changed, a name renamed, a name inserted, a field given
// again under another case) is either refused with an error, or accepted
// as the same document with the same amounts: no change of a name
// silently changes what is issued. A change only of case is always
// accepted. Renaming or inserting a name that is a field of its object
// makes another document, which may be taken: those are left out.
//
// ops is read a byte at a time: an operation, then its arguments (which
// object, which name, which letters); name is the new name of a rename or
// an insertion.
func FuzzNamesNeverChangeAmounts(f *testing.F) {
	bases := namesFuzzBases(f)
	// The seeds' objects and names, in the first base (validFE): object 0
	// the body, 5 the line (its names: numeroLinea codigoCABYS cantidad
	// unidadMedida detalle precioUnitario descuento impuesto), 6 its
	// discount; value 29 is the line's precioUnitario. In the second: 4
	// the exoneration, 6 the second line's discount, 8 the other charge.
	f.Add(uint8(0), []byte{5, 1, 6}, "montoDescuento")                       // the line's descuento renamed
	f.Add(uint8(0), []byte{5, 1, 6}, "descuentos")                           // the line's descuento misspelt
	f.Add(uint8(0), []byte{5, 3, 2, 1, 29}, "")                              // cantidad again as Cantidad, another value
	f.Add(uint8(0), []byte{5, 1, 6}, "deſcuento")                            // descuento with a long s: the same name
	f.Add(uint8(0), []byte{5, 0, 2, 0xff, 5, 0, 6, 0xff, 6, 0, 0, 0x0f}, "") // names upper-cased
	f.Add(uint8(0), []byte{5, 2, 29}, "montoTotalLinea")                     // a computed amount sent
	f.Add(uint8(0), []byte{0, 2, 29}, "totalComprobante")                    // a total at the top
	f.Add(uint8(0), []byte{6, 1, 0}, "porcentaje")                           // the discount's percentage misspelt
	f.Add(uint8(0), []byte{0, 1, 1}, "tipoDocumento")                        // a snake_case name in camelCase
	f.Add(uint8(1), []byte{4, 1, 3}, "tarifaExoneracion")                    // the exonerated rate misspelt
	f.Add(uint8(1), []byte{6, 1, 1}, "monto")                                // a discount amount misspelt
	f.Add(uint8(1), []byte{8, 1, 1}, "porcentaje")                           // a charge's percentage misspelt
	f.Add(uint8(2), []byte{0, 0, 3, 0x55, 1, 2, 9}, "xyzzy")
	issuer := testIssuer(f)
	type answers struct{ doc, calc []byte }
	want := make([]answers, len(bases))
	for i, b := range bases {
		want[i].doc, want[i].calc = sendAndCalculate(f, b, issuer)
	}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte, name string) {
		base := bases[int(which)%len(bases)]
		wantDoc, wantCalc := want[int(which)%len(bases)].doc, want[int(which)%len(bases)].calc
		tree := parseOrdered(t, base)
		objs := collectObjects(tree, reflect.TypeFor[SendDocumentRequest](), nil)
		cur := 0
		next := func() int {
			if cur >= len(ops) {
				return 0
			}
			cur++
			return int(ops[cur-1])
		}
		onlyCase, other := true, false
		for n := 0; n < 4 && cur < len(ops); n++ {
			o := objs[next()%len(objs)]
			switch next() % 4 {
			case 0: // change the case of a name
				if len(o.obj.keys) == 0 {
					continue
				}
				i := next() % len(o.obj.keys)
				o.obj.keys[i] = flipCase(o.obj.keys[i], byte(next()))
			case 1: // rename a name
				if len(o.obj.keys) == 0 || name == "" {
					continue
				}
				i := next() % len(o.obj.keys)
				if !strings.EqualFold(o.obj.keys[i], name) {
					onlyCase = false
					other = other || o.fieldOf(name)
				}
				o.obj.keys[i] = name
			case 2: // insert a name, with a value of the body
				if name == "" {
					continue
				}
				onlyCase = false
				other = other || o.fieldOf(name) && !o.has(name)
				v := someValue(tree, next())
				o.obj.keys = append(o.obj.keys, name)
				o.obj.vals = append(o.obj.vals, v)
			case 3: // give a field again, in another case
				if len(o.obj.keys) == 0 {
					continue
				}
				onlyCase = false
				i := next() % len(o.obj.keys)
				k := flipCase(o.obj.keys[i], byte(next()))
				v := someValue(tree, next())
				o.obj.keys = append(o.obj.keys, k)
				o.obj.vals = append(o.obj.vals, v)
			}
		}
		if other {
			return // another document, which may be valid
		}
		mutated := writeOrdered(tree)

		gotDoc, gotCalc := sendAndCalculate(t, mutated, issuer)
		if onlyCase && (gotDoc == nil || gotCalc == nil) {
			t.Fatalf("a change of case only is refused:\n%s", mutated)
		}
		if gotDoc != nil && !bytes.Equal(gotDoc, wantDoc) {
			t.Fatalf("the send took another document without an error:\n%s\ngot  %s\nwant %s", mutated, gotDoc, wantDoc)
		}
		if gotCalc != nil && !bytes.Equal(gotCalc, wantCalc) {
			t.Fatalf("the calculation gave other amounts without an error:\n%s\ngot  %s\nwant %s", mutated, gotCalc, wantCalc)
		}
	})
}

// namesFuzzBases are valid bodies of several types: every optional
// structure the calculation reads (discounts as a percentage and as an
// amount, exonerations, other charges).
func namesFuzzBases(t testing.TB) [][]byte {
	bases := [][]byte{[]byte(validFE)}
	withOthers := mutateJSON(t, validFE, func(m map[string]any) {
		m["otrosCargos"] = []any{map[string]any{"tipoDocumentoOC": "06", "detalle": "Servicio", "porcentajeOC": 10}}
		line := m["detalleServicio"].([]any)[0].(map[string]any)
		line["impuesto"].([]any)[0].(map[string]any)["exoneracion"] = map[string]any{"tipoDocumentoEX1": "04",
			"numeroDocumento": "AL-1", "nombreInstitucion": "01", "fechaEmisionEX": "2026-01-01T00:00:00", "tarifaExonerada": 13}
		m["detalleServicio"] = append(m["detalleServicio"].([]any), map[string]any{"numeroLinea": 2, "codigoCABYS": "8314100000000",
			"cantidad": 2, "unidadMedida": "Sp", "detalle": "Servicio", "precioUnitario": 15000,
			"descuento": []any{map[string]any{"montoDescuento": 500, "codigoDescuento": "07"}},
			"impuesto":  []any{map[string]any{"codigo": "01", "codigoTarifaIVA": "04"}}})
		m["resumenFactura"].(map[string]any)["medioPago"] = []any{map[string]any{"tipoMedioPago": "02"}}
	})
	bases = append(bases, withOthers)
	for _, r := range generatedRequests(t, 6) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, b)
	}
	issuer := testIssuer(t)
	for i, b := range bases {
		if d, c := sendAndCalculate(t, b, issuer); d == nil || c == nil {
			t.Fatalf("base %d is not accepted: %s", i, b)
		}
	}
	return bases
}

// sendAndCalculate is the document a send body makes and the calculate
// call's answer to it, each as JSON, or nil when refused.
func sendAndCalculate(t testing.TB, body []byte, issuer Issuer) (doc, calc []byte) {
	t.Helper()
	if req, err := DecodeSendRequest(body); err == nil {
		if d, err := NewDocument(req, issuer); err == nil {
			if doc, err = json.Marshal(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if req, err := DecodeCalculateRequest(body); err == nil {
		if a, err := CalculateAmounts(req); err == nil {
			if calc, err = json.Marshal(a); err != nil {
				t.Fatal(err)
			}
		}
	}
	return doc, calc
}

// flipCase changes the case of the ASCII letters of s at the positions
// whose bit (position mod 8) is set in mask.
func flipCase(s string, mask byte) string {
	b := []byte(s)
	for i, c := range b {
		if mask&(1<<(i%8)) != 0 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = c ^ 0x20
		}
	}
	return string(b)
}

// ordered is a JSON object that keeps its names' order and repeats.
type ordered struct {
	keys []string
	vals []any
}

// parseOrdered reads a JSON value into objects (*ordered), arrays
// ([]any), json.Number, strings, booleans and nil.
func parseOrdered(t testing.TB, b []byte) any {
	t.Helper()
	v, err := readOrderedBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readOrderedBytes(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readOrdered(dec)
}

func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.vals = append(o.vals, v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return tok, nil
}

// writeOrdered writes what readOrdered read.
func writeOrdered(v any) []byte {
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case *ordered:
			b.WriteByte('{')
			for i, k := range x.keys {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				write(x.vals[i])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		default:
			vb, _ := json.Marshal(x)
			b.Write(vb)
		}
	}
	write(v)
	return b.Bytes()
}

// someValue is a copy of the n-th value of tree, in a walk of it.
func someValue(tree any, n int) any {
	var all []any
	var walk func(v any)
	walk = func(v any) {
		all = append(all, v)
		switch x := v.(type) {
		case *ordered:
			for _, e := range x.vals {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(tree)
	v, err := readOrderedBytes(writeOrdered(all[n%len(all)]))
	if err != nil {
		panic(err) // what writeOrdered writes reads back
	}
	return v
}

// typedObject is an object of the body and the Go type it is read into
// (nil when the test does not know it).
type typedObject struct {
	obj *ordered
	typ reflect.Type
}

// fieldOf reports whether name is a field of the object (or an older
// spelling of one), matched as encoding/json matches names; true when the
// object's type is not known.
func (o typedObject) fieldOf(name string) bool {
	if o.typ == nil {
		return true
	}
	_, ok := modelField(o.typ, name)
	return ok
}

// has reports whether the object names name, in any case.
func (o typedObject) has(name string) bool {
	for _, k := range o.obj.keys {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// olderSpellings are the names a reference also reads (contract A.5).
var olderSpellings = map[string]reflect.Type{"tipodoc": reflect.TypeFor[string](), "fechaemision": reflect.TypeFor[string]()}

// modelField is the type of the field of struct type t that name names,
// found by the json tags of t (embedded structs' fields promoted), without
// regard to case.
func modelField(t reflect.Type, name string) (reflect.Type, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			return f.Type, true
		}
	}
	if t == reflect.TypeFor[InformacionReferencia]() {
		if ft, ok := olderSpellings[strings.ToLower(name)]; ok {
			return ft, true
		}
	}
	return nil, false
}

// collectObjects lists every object of v with its Go type t (nil when not
// known).
func collectObjects(v any, t reflect.Type, out []typedObject) []typedObject {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
		if _, isArray := v.([]any); t.Kind() == reflect.Slice && !isArray {
			break
		}
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
			continue
		}
		a := v.([]any)
		for _, e := range a {
			out = collectObjects(e, t.Elem(), out)
		}
		return out
	}
	switch x := v.(type) {
	case *ordered:
		if t != nil && t.Kind() != reflect.Struct {
			t = nil
		}
		out = append(out, typedObject{x, t})
		for i, k := range x.keys {
			var ft reflect.Type
			if t != nil {
				ft, _ = modelField(t, k)
			}
			out = collectObjects(x.vals[i], ft, out)
		}
	case []any:
		for _, e := range x {
			out = collectObjects(e, nil, out)
		}
	}
	return out
}
