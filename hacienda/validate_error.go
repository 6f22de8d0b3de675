package hacienda

import (
	"sort"
	"strconv"
	"strings"

	"facturad/hacienda/msg"
)

// ValidationError reports every problem found in a request or document at
// once. The gateway renders it as the contract's 400 body:
// {"statusCode": 400, "message": Message, "errors": Fields}.
//
// Field paths use the request's own names: snake_case metadata (id_externo,
// tipo_documento), the receptor as ReceptorRequest.<Field>
// (ReceptorRequest.CorreoElectronico), and the camelCase document body with
// zero-based indexes (detalleServicio[1].impuesto[0].codigoTarifaIVA,
// resumenFactura.medioPago[0].totalMedioPago).
//
// Each field's messages are entries of the catalogue (package msg) with
// their values: the gateway renders them in the caller's language.
type ValidationError struct {
	Message string
	Fields  map[string][]msg.Message
}

// DefaultValidationMessage is the Message of a ValidationError built by this
// package.
const DefaultValidationMessage = "One or more validation errors occurred."

// Error summarises the error: the message and the number of fields, and the
// first few paths in a stable order.
func (e *ValidationError) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("validation failed: ")
	b.WriteString(e.Message)
	paths := e.Paths()
	if len(paths) > 0 {
		b.WriteString(" (")
		for i, p := range paths {
			if i == 5 {
				b.WriteString(", …")
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p)
			b.WriteString(": ")
			b.WriteString(e.Fields[p][0].String())
		}
		b.WriteString(")")
	}
	return b.String()
}

// FieldErrors returns the messages per field path, in English.
func (e *ValidationError) FieldErrors() map[string][]string {
	if e == nil {
		return nil
	}
	return msg.Render(e.Fields, msg.English)
}

// FieldMessages returns the messages per field path, as the catalogue's
// entries with their values.
func (e *ValidationError) FieldMessages() map[string][]msg.Message {
	if e == nil {
		return nil
	}
	return e.Fields
}

// Paths returns the field paths in sorted order.
func (e *ValidationError) Paths() []string {
	if e == nil {
		return nil
	}
	p := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		p = append(p, k)
	}
	sort.Strings(p)
	return p
}

// Add records a message for a field path (duplicates are dropped).
func (e *ValidationError) Add(path string, m msg.Message) {
	if e.Fields == nil {
		e.Fields = make(map[string][]msg.Message)
	}
	for _, had := range e.Fields[path] {
		if had.Equal(m) {
			return
		}
	}
	e.Fields[path] = append(e.Fields[path], m)
}

// Has reports whether a path has at least one message.
func (e *ValidationError) Has(path string) bool {
	if e == nil {
		return false
	}
	return len(e.Fields[path]) > 0
}

// Len returns the number of paths with errors.
func (e *ValidationError) Len() int {
	if e == nil {
		return 0
	}
	return len(e.Fields)
}

// errs accumulates field errors; the zero value is ready to use.
type errs struct {
	v *ValidationError
}

func (e *errs) add(path string, m msg.Message) {
	if e.v == nil {
		e.v = &ValidationError{Message: DefaultValidationMessage}
	}
	e.v.Add(path, m)
}

func (e *errs) ok() bool { return e.v == nil }

// err returns the accumulated error, or nil (a nil error interface, never a
// typed nil).
func (e *errs) err() error {
	if e.v == nil {
		return nil
	}
	return e.v
}

// Path helpers: small, allocation only on the error path.

func idx(base string, i int) string { return base + "[" + strconv.Itoa(i) + "]" }
