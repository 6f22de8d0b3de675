package msg

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Lang is a language the service answers in.
type Lang uint8

const (
	// English is the default: the language of an answer to a caller that
	// asks for no other.
	English Lang = iota
	// Spanish is the answer to a caller whose most wanted language is es
	// or es-* (Accept-Language).
	Spanish
)

// String is the language's tag: "en" or "es".
func (l Lang) String() string {
	if l == Spanish {
		return "es"
	}
	return "en"
}

// FromAcceptLanguage reads an Accept-Language header: Spanish when its most
// wanted language (the highest q, the first of equals) is es or es-*,
// English otherwise, an empty or unreadable header included.
func FromAcceptLanguage(h string) Lang {
	best, bestQ := "", -1.0
	for part := range strings.SplitSeq(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if tag = strings.TrimSpace(tag); tag != "" && q > bestQ {
			best, bestQ = tag, q
		}
	}
	if len(best) == 2 || len(best) > 2 && best[2] == '-' {
		if strings.EqualFold(best[:2], "es") {
			return Spanish
		}
	}
	return English
}

// Kind tells the top-level message of an error answer from a message
// about one request field.
type Kind uint8

const (
	// Field is a message about one request field (a 400's "errors").
	Field Kind = iota
	// Answer is the top-level message of an error body; its code is the
	// body's "code".
	Answer
	// Part is a word or phrase other messages take as an argument (a JSON
	// type's name, a list's "and"): never a message of its own.
	Part
)

// Entry is one message of the catalogue. Entries are declared once, as
// package variables, and never built elsewhere.
type Entry struct {
	code   string
	kind   Kind
	status int
	en, es string
	when   string
}

// Code is the entry's stable machine-readable code.
func (e *Entry) Code() string { return e.code }

// Kind says whether the entry is an answer's message or a field's.
func (e *Entry) Kind() Kind { return e.kind }

// Status is the HTTP status an answer entry goes with (0 when it goes
// with several, which When names); 400 for a field entry.
func (e *Entry) Status() int { return e.status }

// Template returns the entry's fmt template in l.
func (e *Entry) Template(l Lang) string {
	if l == Spanish {
		return e.es
	}
	return e.en
}

// When says, for the documentation, when an answer entry is given ("" for
// a field entry, whose English text says it).
func (e *Entry) When() string { return e.when }

// With is the entry's message with its arguments, in the order of the
// English template.
func (e *Entry) With(args ...any) Message { return Message{e: e, args: args} }

// Message is an entry of the catalogue with its arguments: what to say,
// not yet in which language. The zero Message says nothing.
type Message struct {
	e    *Entry
	args []any
}

// Entry is the message's catalogue entry (nil for the zero Message).
func (m Message) Entry() *Entry { return m.e }

// Code is the entry's code ("" for the zero Message).
func (m Message) Code() string {
	if m.e == nil {
		return ""
	}
	return m.e.code
}

// IsZero reports whether m is the zero Message.
func (m Message) IsZero() bool { return m.e == nil }

// In renders m in l; a Message among its arguments is rendered in l too.
func (m Message) In(l Lang) string {
	if m.e == nil {
		return ""
	}
	args, cloned := m.args, false
	for i, a := range m.args {
		if sub, ok := a.(Message); ok {
			if !cloned {
				args, cloned = slices.Clone(m.args), true
			}
			args[i] = sub.In(l)
		}
	}
	return fmt.Sprintf(m.e.Template(l), args...)
}

// String renders m in English, the language of logs and Go errors.
func (m Message) String() string { return m.In(English) }

// Equal reports whether m and o are the same entry saying the same thing.
func (m Message) Equal(o Message) bool {
	return m.e == o.e && m.String() == o.String()
}

// Render renders messages by field in l; nil for none.
func Render(fields map[string][]Message, l Lang) map[string][]string {
	return byField(fields, func(m Message) string { return m.In(l) })
}

// Codes returns the codes of messages by field; nil for none.
func Codes(fields map[string][]Message) map[string][]string {
	return byField(fields, Message.Code)
}

// byField maps every message by field through f; nil for none.
func byField(fields map[string][]Message, f func(Message) string) map[string][]string {
	if fields == nil {
		return nil
	}
	out := make(map[string][]string, len(fields))
	for k, ms := range fields {
		s := make([]string, len(ms))
		for i, m := range ms {
			s[i] = f(m)
		}
		out[k] = s
	}
	return out
}

// One is a map of one field with one message, the form of most single
// refusals.
func One(field string, m Message) map[string][]Message {
	return map[string][]Message{field: {m}}
}

// catalogue is every entry, in the order declared.
var catalogue []*Entry

// field declares a field entry.
func field(code, en, es string) *Entry {
	e := &Entry{code: code, kind: Field, status: 400, en: en, es: es}
	catalogue = append(catalogue, e)
	return e
}

// answer declares an answer entry given with status (0: several, which
// when names).
func answer(code string, status int, en, es, when string) *Entry {
	e := &Entry{code: code, kind: Answer, status: status, en: en, es: es, when: when}
	catalogue = append(catalogue, e)
	return e
}

// part declares a part entry.
func part(code, en, es string) *Entry {
	e := &Entry{code: code, kind: Part, en: en, es: es}
	catalogue = append(catalogue, e)
	return e
}

// All returns every entry of the catalogue: answers, then fields, then
// parts, each kind by code.
func All() []*Entry {
	out := slices.Clone(catalogue)
	slices.SortFunc(out, func(a, b *Entry) int {
		if a.kind != b.kind {
			return int(a.Kind().order()) - int(b.Kind().order())
		}
		return strings.Compare(a.code, b.code)
	})
	return out
}

// order sorts the kinds for All: answers, fields, parts.
func (k Kind) order() int {
	switch k {
	case Answer:
		return 0
	case Field:
		return 1
	}
	return 2
}

// Lookup returns the entry with code, or nil.
func Lookup(code string) *Entry {
	for _, e := range catalogue {
		if e.code == code {
			return e
		}
	}
	return nil
}

// Described is an error that says what went wrong with a message of the
// catalogue, for the callers that answer people to render in their
// language.
type Described interface {
	error
	Describe() Message
}

// Of returns the message of the first error in err's chain that has one.
func Of(err error) (Message, bool) {
	var d Described
	if errors.As(err, &d) {
		return d.Describe(), true
	}
	return Message{}, false
}
