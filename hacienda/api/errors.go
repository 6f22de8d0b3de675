package api

import (
	"slices"
	"strings"
)

// ErrorBody is the error answer of every status but 500 (A.7): for a 400
// the offending fields by their request paths (ReceptorRequest.Nombre,
// detalleServicio[2].cantidad, usuario), each with its messages; errors is
// {} for the other statuses.
type ErrorBody struct {
	StatusCode int                 `json:"statusCode"`
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors"`
}

// SevereErrorBody is the answer of a 500 (A.7) on the calls whose answer
// has no message field of its own: an apology with the incident code under
// which the cause was logged.
type SevereErrorBody struct {
	Error string `json:"error"`
}

// FieldError is a request body the decoders of this package refused: the
// offending fields by their names in the request, each with its messages
// ("body" when the body as a whole is unreadable). The gateway answers it
// with a 400 (ErrorBody).
type FieldError struct {
	Fields map[string][]string
}

func (e *FieldError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + strings.Join(e.Fields[name], "; ")
	}
	return "invalid request: " + strings.Join(parts, ", ")
}

// FieldErrors returns the offending fields with their messages.
func (e *FieldError) FieldErrors() map[string][]string { return e.Fields }

// invalid is a FieldError on one field.
func invalid(field, msg string) *FieldError {
	return &FieldError{Fields: map[string][]string{field: {msg}}}
}
