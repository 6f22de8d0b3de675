// Package msg is the catalogue of what the service says when it refuses a
// call: every message of an error answer, with its stable code and its
// English and Spanish wording.
//
// An [Entry] is one message of the catalogue: a code (snake_case, never
// changed once published), the English text and the Spanish text, both
// fmt templates over the same arguments. A [Message] is an entry with its
// arguments; it is rendered in a [Lang] only when an answer is written, so
// that the code that finds a problem says what it found (the entry and its
// values) and never which language the caller reads.
//
// There are two kinds of entries. An answer entry is the top-level message
// of an error body: its code is the body's "code" (validation_failed,
// company_not_found, store_unavailable...), it names the HTTP status it goes
// with, and it says when it happens, for the documentation. A field entry
// is one message about one request field of a 400: its code goes in the
// body's "codes" beside the field's message in "errors".
//
// # Adding a message
//
// Declare a variable in the file of its area (answers.go for the top-level
// messages; fields.go for what any request may get; document.go for the
// document's rules; request.go for reading a body; tenancy.go for
// companies, branches and users; service.go for the pipeline's and the
// gateway's own checks; registry.go for the registry checks):
//
//	// NotAWeekday: a date that falls on a weekend.
//	NotAWeekday = field("not_a_weekday", "must be a weekday, not a %s", "debe ser un día hábil, no un %s")
//
// then use it where the problem is found: e.Add(path, msg.NotAWeekday.With(day)).
// A top-level refusal (a 429, a 503) is an error type with a
// Describe() Message method (see Described) returning an answer entry.
// The templates are fmt's: the Spanish one takes the same arguments and
// may reorder them with explicit indexes (%[2]s); a literal percent sign
// is %%. A [Message] argument is rendered in the caller's language too.
// The package's tests check that every code is unique and well formed,
// that both templates use the same arguments, and that docs/errors.md
// lists every entry (go test ./hacienda/msg -run TestDocs -update writes
// it); the gateway's tests check that the OpenAPI document lists every
// answer code.
//
// The package is a leaf under hacienda so that every package of the
// service, hacienda itself included, can say its messages with it.
package msg
