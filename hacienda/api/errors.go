package api

import (
	"slices"
	"strings"

	"facturad/hacienda/msg"
)

// ErrorBody is the error answer of every status but 500 (A.7): for a 400
// the offending fields by their request paths (ReceptorRequest.Nombre,
// detalleServicio[2].cantidad, usuario), each with its messages; errors is
// {} for the other statuses. Ours beside the contract's: Code, the
// answer's stable code (validation_failed, company_not_found...), and
// Codes, the code of each message of Errors, field by field in the same
// order (absent when Errors is empty). Message and Errors are in the
// caller's language (Accept-Language: Spanish for es and es-*, English
// otherwise); the codes are the same in every language.
type ErrorBody struct {
	StatusCode int                 `json:"statusCode"`
	Code       string              `json:"code"`
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors"`
	Codes      map[string][]string `json:"codes,omitempty"`
}

// SevereErrorBody is the answer of a 500 (A.7) on the calls whose answer
// has no message field of its own: an apology with the incident code under
// which the cause was logged. Ours beside the contract's error: Code
// (internal_error, or outcome_unknown when a change may have been made)
// and Incident, the incident code the message quotes.
type SevereErrorBody struct {
	Error    string `json:"error"`
	Code     string `json:"code"`
	Incident string `json:"incident"`
}

// FieldError is a request body the decoders of this package refused: the
// offending fields by their names in the request, each with its messages
// ("body" when the body as a whole is unreadable). The gateway answers it
// with a 400 (ErrorBody), in the caller's language.
type FieldError struct {
	Fields map[string][]msg.Message
}

func (e *FieldError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for name := range e.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	en := msg.Render(e.Fields, msg.English)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + ": " + strings.Join(en[name], "; ")
	}
	return "invalid request: " + strings.Join(parts, ", ")
}

// FieldErrors returns the offending fields with their messages in
// English.
func (e *FieldError) FieldErrors() map[string][]string { return msg.Render(e.Fields, msg.English) }

// FieldMessages returns the offending fields with their messages.
func (e *FieldError) FieldMessages() map[string][]msg.Message { return e.Fields }

// Invalid is a FieldError on one field.
func Invalid(field string, m msg.Message) *FieldError {
	return &FieldError{Fields: msg.One(field, m)}
}

// invalid is Invalid, for this package.
func invalid(field string, m msg.Message) *FieldError { return Invalid(field, m) }
