package msg

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/errors.md from the catalogue")

var codeForm = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// sameInBothLanguages are the entries whose words are the same in English
// and Spanish.
var sameInBothLanguages = []string{"json_got_null"}

func TestCatalogueEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range All() {
		switch {
		case !codeForm.MatchString(e.Code()):
			t.Errorf("%s: a code is lower-case words joined by _", e.Code())
		case seen[e.Code()]:
			t.Errorf("%s: declared twice", e.Code())
		}
		seen[e.Code()] = true
		en, es := e.Template(English), e.Template(Spanish)
		if strings.TrimSpace(en) == "" || strings.TrimSpace(es) == "" {
			t.Errorf("%s: a template is empty", e.Code())
		}
		if en == es && !slices.Contains(sameInBothLanguages, e.Code()) {
			t.Errorf("%s: the Spanish template is the English one", e.Code())
		}
		switch e.Kind() {
		case Answer:
			if e.Status() < 400 || e.Status() > 599 || e.When() == "" {
				t.Errorf("%s: an answer has an error status and says when it is given (status %d)", e.Code(), e.Status())
			}
		case Field:
			if e.Status() != 400 || e.When() != "" {
				t.Errorf("%s: a field message goes with 400 and its text says when", e.Code())
			}
		}
	}
}

// verbs reads the fmt verbs of a template: the verb of each argument, by
// index from 1, and whether an index is given explicitly anywhere.
func verbs(t *testing.T, code, tmpl string) (map[int]byte, bool) {
	t.Helper()
	out := map[int]byte{}
	explicit := false
	arg := 0
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' {
			continue
		}
		i++
		for i < len(tmpl) && strings.IndexByte("+-# 0123456789.", tmpl[i]) >= 0 {
			i++
		}
		if i < len(tmpl) && tmpl[i] == '[' {
			end := strings.IndexByte(tmpl[i:], ']')
			if end < 0 {
				t.Fatalf("%s: an argument index without its ] in %q", code, tmpl)
			}
			n, err := strconv.Atoi(tmpl[i+1 : i+end])
			if err != nil {
				t.Fatalf("%s: a bad argument index in %q", code, tmpl)
			}
			arg, explicit = n-1, true
			i += end + 1
		}
		if i >= len(tmpl) {
			t.Fatalf("%s: a template ends in a %% sign: %q", code, tmpl)
		}
		if tmpl[i] == '%' {
			continue
		}
		arg++
		if v, ok := out[arg]; ok && v != tmpl[i] {
			t.Errorf("%s: argument %d is %%%c and %%%c in %q", code, arg, v, tmpl[i], tmpl)
		}
		out[arg] = tmpl[i]
	}
	return out, explicit
}

// TestTemplatesTakeTheSameArguments: the Spanish template reads the
// English one's arguments with the same verbs; it may leave one out only
// by naming the others' indexes (fmt then reports no extra argument).
func TestTemplatesTakeTheSameArguments(t *testing.T) {
	for _, e := range All() {
		en, _ := verbs(t, e.Code(), e.Template(English))
		es, explicit := verbs(t, e.Code(), e.Template(Spanish))
		for i, v := range es {
			if en[i] != v {
				t.Errorf("%s: Spanish argument %d is %%%c, English %%%c", e.Code(), i, v, en[i])
			}
		}
		for i := range en {
			if _, ok := es[i]; !ok && !explicit {
				t.Errorf("%s: the Spanish template leaves argument %d out without naming its indexes", e.Code(), i)
			}
		}
		// Rendered with values of the verbs' kinds, neither says %!.
		args := make([]any, len(en))
		for i := range args {
			switch en[i+1] {
			case 'd', 'X', 'x':
				args[i] = 7
			case 0:
				t.Errorf("%s: argument %d is not used by the English template", e.Code(), i+1)
				args[i] = "x"
			default:
				args[i] = "x"
			}
		}
		m := e.With(args...)
		for _, l := range []Lang{English, Spanish} {
			if s := m.In(l); strings.Contains(s, "%!") {
				t.Errorf("%s: renders badly in %s: %q", e.Code(), l, s)
			}
		}
	}
}

func TestMessageRendersNestedMessagesInItsLanguage(t *testing.T) {
	m := WrongJSONType.With(JSONWantString.With(), JSONGotNumber.With())
	if got := m.In(English); got != "must be a JSON string, not a number" {
		t.Errorf("English: %q", got)
	}
	if got := m.In(Spanish); got != "debe ser una cadena JSON, no un número" {
		t.Errorf("Spanish: %q", got)
	}
	if m.Code() != "json_type_mismatch" || m.String() != m.In(English) {
		t.Errorf("code %q, String %q", m.Code(), m.String())
	}
	var zero Message
	if !zero.IsZero() || zero.String() != "" || zero.Code() != "" {
		t.Errorf("the zero Message says %q (%q)", zero.String(), zero.Code())
	}
	fields := map[string][]Message{"a": {Required.With(), MaxLength.With(3)}}
	if got := Render(fields, Spanish)["a"]; !slices.Equal(got, []string{"es obligatorio", "debe tener como máximo 3 caracteres"}) {
		t.Errorf("Render: %q", got)
	}
	if got := Codes(fields)["a"]; !slices.Equal(got, []string{"required", "max_length"}) {
		t.Errorf("Codes: %q", got)
	}
}

func TestFromAcceptLanguage(t *testing.T) {
	for h, want := range map[string]Lang{
		"":                                   English,
		"es":                                 Spanish,
		"es-CR":                              Spanish,
		"ES-cr":                              Spanish,
		"es-CR,es;q=0.9,en;q=0.8":            Spanish,
		"en-US,es;q=0.5":                     English,
		"en;q=0.4, es-419;q=0.6":             Spanish,
		"fr, es;q=0.9":                       English,
		"*":                                  English,
		"est":                                English,
		"esperanto":                          English,
		"es;q=0.5, en;q=0.5":                 Spanish, // the first of equals
		"de;q=garbage, es":                   English, // an unreadable q counts as 1
		" es-MX ; q=1 ":                      Spanish,
		"en-GB,en;q=0.9,es-CR;q=0.8,es;q=.7": English,
	} {
		if got := FromAcceptLanguage(h); got != want {
			t.Errorf("FromAcceptLanguage(%q) = %s, want %s", h, got, want)
		}
	}
}

func FuzzFromAcceptLanguage(f *testing.F) {
	for _, s := range []string{"", "es-CR,es;q=0.9", "en;q=x", ";;,", "es;q=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		l := FromAcceptLanguage(h)
		if l != English && l != Spanish {
			t.Fatalf("%q: %d", h, l)
		}
		if l == Spanish && !strings.Contains(strings.ToLower(h), "es") {
			t.Fatalf("%q: Spanish without es", h)
		}
	})
}

// declared maps the package's variable names to the codes of the entries
// they hold, read from its source.
func declared(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	names := map[string]string{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Values) != len(vs.Names) {
				return true
			}
			for i, v := range vs.Values {
				call, ok := v.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					continue
				}
				fn, ok := call.Fun.(*ast.Ident)
				lit, isLit := call.Args[0].(*ast.BasicLit)
				if !ok || !isLit || (fn.Name != "field" && fn.Name != "answer" && fn.Name != "part") {
					continue
				}
				code, _ := strconv.Unquote(lit.Value)
				names[vs.Names[i].Name] = code
			}
			return true
		})
	}
	return names
}

// TestEveryEntryIsSaid: each entry is a package variable that some
// package of the service uses; a message no code says is a dead line of
// the documentation.
func TestEveryEntryIsSaid(t *testing.T) {
	names := declared(t)
	if len(names) != len(All()) {
		t.Fatalf("%d entries declared as variables, %d in the catalogue", len(names), len(All()))
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		alias := ""
		for _, imp := range af.Imports {
			if imp.Path.Value == `"facturad/hacienda/msg"` {
				alias = "msg"
				if imp.Name != nil {
					alias = imp.Name.Name
				}
			}
		}
		if alias == "" {
			return nil
		}
		af, err = parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok && id.Name == alias {
					used[se.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, code := range names {
		if !used[name] {
			t.Errorf("msg.%s (%s) is said nowhere", name, code)
		}
	}
}

const docPath = "../../docs/errors.md"

const (
	docBegin = "<!-- catalogue: generated by go test ./hacienda/msg -run TestDocs -update -->\n"
	docEnd   = "<!-- end of the catalogue -->\n"
)

// cell writes a template as a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// docTables renders the catalogue as docs/errors.md's tables.
func docTables(names map[string]string) string {
	byCode := map[string]string{}
	for n, c := range names {
		byCode[c] = n
	}
	var b bytes.Buffer
	section := func(title, intro string, kind Kind, head string, row func(e *Entry) string) {
		fmt.Fprintf(&b, "### %s\n\n%s\n\n%s\n", title, intro, head)
		for _, e := range All() {
			if e.Kind() == kind {
				b.WriteString(row(e))
			}
		}
		b.WriteString("\n")
	}
	section("Answer codes", "The `code` of an error body (and of the severe 500 body, and the `mensajeApiKey` / `mensaje_api_key` of an A.6 call's 500).",
		Answer, "| code | status | when | English | Spanish | Go |\n|---|---|---|---|---|---|",
		func(e *Entry) string {
			return fmt.Sprintf("| `%s` | %d | %s | %s | %s | `msg.%s` |\n", e.Code(), e.Status(), cell(e.When()),
				cell(e.Template(English)), cell(e.Template(Spanish)), byCode[e.Code()])
		})
	section("Field message codes", "The codes in a 400's `codes`, beside each message of `errors` (and of a 402's `cuotaMensual`).",
		Field, "| code | English | Spanish | Go |\n|---|---|---|---|",
		func(e *Entry) string {
			return fmt.Sprintf("| `%s` | %s | %s | `msg.%s` |\n", e.Code(), cell(e.Template(English)), cell(e.Template(Spanish)), byCode[e.Code()])
		})
	section("Parts", "Words and phrases that other messages take as arguments; they are never a message, nor a code, of their own.",
		Part, "| name | English | Spanish | Go |\n|---|---|---|---|",
		func(e *Entry) string {
			return fmt.Sprintf("| `%s` | %s | %s | `msg.%s` |\n", e.Code(), cell(e.Template(English)), cell(e.Template(Spanish)), byCode[e.Code()])
		})
	return b.String()
}

// TestDocs keeps docs/errors.md's tables the catalogue's: go test
// ./hacienda/msg -run TestDocs -update rewrites them.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no catalogue between %q and %q", docPath, docBegin, docEnd)
	}
	want := docTables(declared(t))
	if got := string(doc[i+len(docBegin) : j]); got != want {
		if !*update {
			t.Fatalf("the tables of %s are not the catalogue's; run go test ./hacienda/msg -run TestDocs -update", docPath)
		}
		out := append(append(append([]byte{}, doc[:i+len(docBegin)]...), want...), doc[j:]...)
		if err := os.WriteFile(docPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
