package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/xmltext"
)

// The decoding of the request bodies the contract reads without regard to
// the case of their names: the JSON objects of the branch, user and
// webhook calls and the company form, multipart or URL-encoded. A body
// type's fields say how they are read, so that each name is written once,
// in the type:
//
//   - the name is the json tag's for a JSON body, the Go name (or the form
//     tag's; "-" skips the field) for a form;
//   - also:"old other" lists older spellings read as well (a body that
//     gives two spellings of one field is refused);
//   - a string is read from a JSON string, a number (its literal text) or
//     null (""); read:"text" takes only a string or null, read:"flag" an
//     S/N flag (see fields.flag);
//   - a *string is nil when the field is absent, else read as a string
//     (so that an empty value differs from an absent one);
//   - a bool is read as a flag, true when it reads "S" (true, si, 1...); a
//     []string is a JSON array of strings (comma-separated in a form); a
//     []byte an uploaded file.
//
// Decoding is strict, as the document calls' is: a name that is no field
// of the type (nor an older spelling of one) is refused on its own path,
// the closest name suggested (hacienda.UnknownFieldMessage); a field of
// the answer the service sets (serviceFields: an id, a creation time, a
// generated secret) is refused as such; and a field given twice (names
// that differ only in case, or a name and its older spelling) is refused,
// rather than one of them winning by the body's or a map's order.
//
// Every offending field is reported at once, in a *FieldError.

// DecodeBranchInput reads a branch create or update body (A.3).
func DecodeBranchInput(body []byte) (BranchInput, error) { return decodeJSON[BranchInput](body) }

// DecodeUserRequest reads the create-user and reseller calls' body. A
// missing usuario is not an error here: the service refuses it once it
// has checked that the caller may act on the branch.
func DecodeUserRequest(body []byte) (UserRequest, error) { return decodeJSON[UserRequest](body) }

// DecodeAPIUserUpdate reads an API user's update body. A missing activo is
// not an error here: the gateway says it is required.
func DecodeAPIUserUpdate(body []byte) (APIUserUpdate, error) { return decodeJSON[APIUserUpdate](body) }

// DecodeWebhookRequest reads a webhook create body (A.12).
func DecodeWebhookRequest(body []byte) (WebhookRequest, error) {
	return decodeJSON[WebhookRequest](body)
}

// DecodeCompanyForm reads a company create or update form (A.2) of content
// type contentType: multipart/form-data, or URL-encoded (without a
// certificate). Anything else is an error on "body".
func DecodeCompanyForm(contentType string, body []byte) (CompanyForm, error) {
	var (
		f   *fields
		err error
	)
	switch {
	case hasMediaType(contentType, "multipart/form-data"):
		f, err = multipartFields(contentType, body)
	case hasMediaType(contentType, "application/x-www-form-urlencoded"):
		f, err = urlencodedFields(body)
	default:
		err = invalid("body", msg.MultipartRequired.With())
	}
	if err != nil {
		return CompanyForm{}, err
	}
	var form CompanyForm
	f.into(&form)
	return form, f.err()
}

// hasMediaType reports whether the content type ct is of media type mt,
// matched without regard to case.
func hasMediaType(ct, mt string) bool {
	return len(ct) >= len(mt) && strings.EqualFold(ct[:len(mt)], mt)
}

func decodeJSON[T any](body []byte) (T, error) {
	var v T
	f, err := jsonFields(body)
	if err != nil {
		return v, err
	}
	f.into(&v)
	return v, f.err()
}

// serviceFields are, per body type, the fields of the call's answer that
// the service sets: sent back (a client echoing what it read), each is
// refused with msg.ServiceField rather than left out.
var serviceFields = map[reflect.Type][]string{
	reflect.TypeFor[BranchInput]():    {"id", "companiaId", "createdAt", "updatedAt"},
	reflect.TypeFor[CompanyForm]():    {"id", "createdAt", "updatedAt", "certificadoVencido", "expiracionCertificado", "tieneLogo", "mensajeApi"},
	reflect.TypeFor[UserRequest]():    {"contrasena", "apiToken"},
	reflect.TypeFor[APIUserUpdate]():  {"id", "createdAt"},
	reflect.TypeFor[WebhookRequest](): {"id", "secreto", "createdAt"},
}

// checkNames refuses the names of the body that t, the struct read from
// it, does not have (see the package's decoding notes).
func (f *fields) checkNames(t reflect.Type) {
	known := map[string]string{} // lower-cased name or older spelling → the field's name
	aliases := map[string]string{}
	var names []string
	for i := range t.NumField() {
		sf := t.Field(i)
		name := formName(sf)
		if f.json != nil {
			name = jsonName(sf)
		}
		if name == "" {
			continue
		}
		names = append(names, name)
		known[strings.ToLower(name)] = name
		for _, a := range strings.Fields(sf.Tag.Get("also")) {
			known[strings.ToLower(a)] = name
			aliases[a] = name
		}
	}
	given := map[string][]string{} // a field's name → the names it was given under, in order
	refused := map[string]bool{}
	for _, key := range f.given {
		name, ok := known[strings.ToLower(key)]
		switch {
		case ok:
			given[name] = append(given[name], key)
		case refused[key]:
			continue
		case slices.ContainsFunc(serviceFields[t], func(s string) bool { return strings.EqualFold(s, key) }):
			f.addErr(key, msg.ServiceField.With())
		default:
			f.addErr(key, hacienda.UnknownFieldMessage(key, names, aliases))
		}
		refused[key] = !ok
	}
	for name, keys := range given {
		if len(keys) > 1 {
			f.addErr(name, hacienda.RepeatedFieldMessage(keys))
		}
	}
}

// into reads every field of the struct v points to from f, as the field's
// tags say (see above).
func (f *fields) into(v any) {
	rv := reflect.ValueOf(v).Elem()
	f.checkNames(rv.Type())
	for i := range rv.NumField() {
		sf := rv.Type().Field(i)
		name := formName(sf)
		if f.json != nil {
			name = jsonName(sf)
		}
		if name == "" {
			continue
		}
		also := strings.Fields(sf.Tag.Get("also"))
		fv := rv.Field(i)
		switch read := sf.Tag.Get("read"); {
		case read == "flag":
			fv.SetString(f.flag(name, also...))
		case read == "text":
			fv.SetString(f.text(name))
		case fv.Kind() == reflect.String:
			fv.SetString(f.str(name, also...))
		case fv.Kind() == reflect.Bool:
			fv.SetBool(f.boolean(name))
		case sf.Type == reflect.TypeFor[[]string]():
			fv.Set(reflect.ValueOf(f.strs(name)))
		case sf.Type == reflect.TypeFor[[]byte]():
			fv.SetBytes(f.file(name))
		case sf.Type == reflect.TypeFor[*string]():
			if v, ok := f.lookup(name, also...); ok {
				fv.Set(reflect.ValueOf(&v))
			}
		default:
			panic("api: no reading for field " + sf.Name + " of type " + sf.Type.String())
		}
	}
}

// jsonName is a field's name in a JSON body: its json tag's, or "" when it
// has none.
func jsonName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "-" || !sf.IsExported() {
		return ""
	}
	return name
}

// formName is a field's name in a form: its form tag's, else its Go name;
// "" for a field that is not in the form.
func formName(sf reflect.StructField) string {
	name := sf.Tag.Get("form")
	switch {
	case name == "-" || !sf.IsExported():
		return ""
	case name == "":
		return sf.Name
	}
	return name
}

// fields reads named values out of a request body without regard to the
// case of the names, collecting a message per offending field. Both the
// JSON objects of the branch, user and webhook calls and the forms of the
// company calls are read through it.
type fields struct {
	json  map[string]json.RawMessage // lower-cased names, for a JSON body
	form  map[string]string          // lower-cased names, for a form body
	files map[string]*multipart.FileHeader
	// given are the body's names as spelled, in the body's order (a
	// form's sorted), once for each time they are given.
	given []string
	errs  map[string][]msg.Message
}

// name records a name of the body as spelled.
func (f *fields) name(k string) { f.given = append(f.given, k) }

func (f *fields) addErr(field string, m msg.Message) {
	if f.errs == nil {
		f.errs = map[string][]msg.Message{}
	}
	f.errs[field] = append(f.errs[field], m)
}

// err is the *FieldError of the collected messages, or nil.
func (f *fields) err() error {
	if len(f.errs) == 0 {
		return nil
	}
	return &FieldError{Fields: f.errs}
}

// jsonFields reads a JSON object body. An empty body, invalid JSON or
// anything but an object is a 400 on "body". Names that differ only in case
// are one field (given twice, it is refused: checkNames).
func jsonFields(body []byte) (*fields, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, invalid("body", msg.JSONObjectRequired.With())
	}
	// The decoder would turn invalid UTF-8 and unpaired surrogate escapes
	// into U+FFFD without a word, and store text the caller never sent.
	if problem := xmltext.CheckJSON(body); !problem.IsZero() {
		return nil, invalid("body", problem)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, invalid("body", jsonSyntaxMessage(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, invalid("body", msg.JSONObjectRequired.With())
	}
	f := &fields{json: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid("body", jsonSyntaxMessage(err))
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, invalid("body", jsonSyntaxMessage(err))
		}
		f.json[strings.ToLower(name)] = raw
		f.name(name)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, invalid("body", jsonSyntaxMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("body", msg.JSONTrailing.With())
	}
	return f, nil
}

// jsonSyntaxMessage describes a JSON syntax error without quoting the body.
func jsonSyntaxMessage(err error) msg.Message {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return msg.InvalidJSONAt.With(se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return msg.JSONTruncated.With()
	}
	return msg.InvalidJSON.With(err.Error())
}

// multipartFields reads a multipart/form-data body of content type ct,
// files kept in memory (the route's body limit bounds them).
func multipartFields(ct string, body []byte) (*fields, error) {
	_, params, err := mime.ParseMediaType(ct)
	boundary := params["boundary"]
	if err != nil || boundary == "" {
		return nil, invalid("body", msg.MultipartBoundary.With())
	}
	form, err := multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(int64(len(body)) + 1)
	if err != nil {
		return nil, invalid("body", msg.MultipartBroken.With())
	}
	f := &fields{form: map[string]string{}, files: map[string]*multipart.FileHeader{}}
	// Each value and file is a name given (one given twice is refused:
	// checkNames), so that no value wins by its place in the body.
	for _, k := range slices.Sorted(maps.Keys(form.Value)) {
		for _, v := range form.Value[k] {
			f.form[strings.ToLower(k)] = v
			f.name(k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(form.File)) {
		for _, fh := range form.File[k] {
			f.files[strings.ToLower(k)] = fh
			f.name(k)
		}
	}
	return f, nil
}

// urlencodedFields reads an application/x-www-form-urlencoded body (a form
// without a certificate).
func urlencodedFields(body []byte) (*fields, error) {
	vs, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, invalid("body", msg.FormBroken.With())
	}
	f := &fields{form: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(vs)) {
		for _, v := range vs[k] { // each a name given, as in multipartFields
			f.form[strings.ToLower(k)] = v
			f.name(k)
		}
	}
	return f, nil
}

// str returns the first of name and its aliases that is present. In JSON a
// string, a number (its literal text) or null is accepted.
func (f *fields) str(name string, aliases ...string) string {
	v, _ := f.lookup(name, aliases...)
	return v
}

// lookup is str that also tells whether the field was present. A text
// field of a form sent as a file is refused (and present), rather than
// read as absent: its value would be dropped without a word.
func (f *fields) lookup(name string, aliases ...string) (string, bool) {
	for _, n := range append([]string{name}, aliases...) {
		key := strings.ToLower(n)
		if f.form != nil {
			if v, ok := f.form[key]; ok {
				return v, true
			}
			if _, ok := f.files[key]; ok {
				f.addErr(name, msg.TextNotFile.With())
				return "", true
			}
			continue
		}
		raw, ok := f.json[key]
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) == 0, string(raw) == "null":
			return "", true
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				f.addErr(name, msg.NotAString.With())
				return "", true
			}
			return s, true
		case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
			return string(raw), true
		default:
			f.addErr(name, msg.NotAString.With())
			return "", true
		}
	}
	return "", false
}

// text reads a field that must be a JSON string (or null, or absent: "").
// Unlike str it takes no number for its literal text: a URL or a name
// given as a number is a mistake, reported as the send request reports a
// value of the wrong JSON type. Form bodies have only text.
func (f *fields) text(name string) string {
	if f.json == nil {
		return f.str(name)
	}
	raw := bytes.TrimSpace(f.json[strings.ToLower(name)])
	if len(raw) == 0 || string(raw) == "null" || raw[0] == '"' {
		return f.str(name)
	}
	f.addErr(name, msg.WrongJSONType.With(msg.JSONWantString.With(), jsonTypeName(raw)))
	return ""
}

// strs reads an array of strings; a missing or null one is nil.
func (f *fields) strs(name string) []string {
	if f.json == nil {
		if v := f.str(name); v != "" {
			return strings.Split(v, ",")
		}
		return nil
	}
	raw := bytes.TrimSpace(f.json[strings.ToLower(name)])
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		f.addErr(name, msg.NotStringArray.With())
		return nil
	}
	return out
}

// jsonTypeName names the JSON type of a value that is not a string or null.
func jsonTypeName(raw []byte) msg.Message {
	switch raw[0] {
	case '{':
		return msg.JSONGotObject.With()
	case '[':
		return msg.JSONGotArray.With()
	case 't', 'f':
		return msg.JSONGotBoolean.With()
	}
	return msg.JSONGotNumber.With()
}

// flag reads an S/N flag; true/false (JSON booleans or text) and si/no are
// accepted too. Absent or empty is "".
func (f *fields) flag(name string, aliases ...string) string {
	for _, n := range append([]string{name}, aliases...) {
		if f.json != nil {
			raw := bytes.TrimSpace(f.json[strings.ToLower(n)])
			switch string(raw) {
			case "true":
				return "S"
			case "false":
				return "N"
			}
		}
	}
	v, ok := f.lookup(name, aliases...)
	if !ok {
		return ""
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return ""
	case "s", "si", "sí", "true", "1", "y", "yes":
		return "S"
	case "n", "no", "false", "0":
		return "N"
	}
	f.addErr(name, msg.FlagSNQuoted.With())
	return ""
}

// boolean reads a true/false field; S/N and 1/0 are accepted too. Absent
// or empty is false.
func (f *fields) boolean(name string) bool {
	return f.flag(name) == "S"
}

// file returns the content of an uploaded file field. A part without a
// file name and empty (a browser's form sent without choosing a file) is
// read as text, and counts as absent; an empty file is an error, not an
// absent one (it would keep the stored file without a word), and so is a
// text value under a file field's name.
func (f *fields) file(name string) []byte {
	key := strings.ToLower(name)
	if fh, ok := f.files[key]; ok {
		if fh.Size == 0 {
			f.addErr(name, msg.FileEmpty.With())
			return nil
		}
		r, err := fh.Open()
		if err != nil {
			f.addErr(name, msg.FileUnreadable.With())
			return nil
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			f.addErr(name, msg.FileUnreadable.With())
			return nil
		}
		return b
	}
	if v, ok := f.form[key]; ok && v != "" {
		f.addErr(name, msg.NotAFile.With())
	}
	return nil
}
