package registry

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotRegistered is the registry's answer that it has no such entry: no
// taxpayer with the identification, no authorisation with the number.
var ErrNotRegistered = errors.New("not registered")

// MalformedError is the registry refusing a question (a 400): an
// identification or number it does not accept. Asking again will not help.
type MalformedError struct {
	Endpoint string
	Status   int
	Detail   string // the registry's message, when it gave one
}

func (e *MalformedError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("registry %s refused the question (%d): %s", e.Endpoint, e.Status, e.Detail)
	}
	return fmt.Sprintf("registry %s refused the question (%d)", e.Endpoint, e.Status)
}

// UnavailableError is a question the registry did not answer: it could not
// be reached, it timed out, it failed (5xx), it answered something
// unreadable, or it is blocking us for asking too often (429 or 403). After
// is how long to wait before asking again, when known.
type UnavailableError struct {
	Endpoint string
	Status   int // 0 when no answer came
	After    time.Duration
	Err      error
}

func (e *UnavailableError) Error() string {
	msg := "registry " + e.Endpoint + " unavailable"
	if e.Status != 0 {
		msg += fmt.Sprintf(" (%d)", e.Status)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// RetryAfter is how long a caller should wait before asking again.
func (e *UnavailableError) RetryAfter() time.Duration {
	if e.After > 0 {
		return e.After
	}
	return 30 * time.Second
}

// Unavailable reports whether err says the registry could not answer.
func Unavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}
