package tenant

import (
	"errors"
	"time"
)

// ErrUnavailable marks a failure of a backing service the call cannot do
// without (the store unreachable, its connections dropped, a query that
// timed out waiting, SQLite's lock still held after its busy timeout; the
// shared auth cache unreachable where nothing can stand in for it) that
// is expected to pass: the call may be made again as it is. The gateway
// answers it 503 with Retry-After and counts it as a server error.
// Match it with errors.Is; *UnavailableError carries it.
var ErrUnavailable = errors.New("temporarily unavailable")

// UnavailableRetryAfter is the Retry-After of an *UnavailableError that
// names none: long enough for a pool to reconnect or a failover to end,
// short enough that a retrying caller is not held needlessly.
const UnavailableRetryAfter = 2 * time.Second

// UnavailableError wraps a store's (or the auth cache's) error that means
// "unreachable or temporarily failing" (ErrUnavailable). The stores
// classify their drivers' errors into it; the cause stays in the chain
// for the logs. Its message is the cause's, which may name a host: the
// gateway never puts it in an answer.
type UnavailableError struct {
	Err   error
	After time.Duration // 0 means UnavailableRetryAfter
}

func (e *UnavailableError) Error() string {
	return "temporarily unavailable: " + e.Err.Error()
}

// Unwrap gives errors.Is and errors.As both ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// RetryAfter is how long the caller should wait before trying again.
func (e *UnavailableError) RetryAfter() time.Duration {
	if e.After <= 0 {
		return UnavailableRetryAfter
	}
	return e.After
}

// Unavailable wraps err as an *UnavailableError; nil stays nil and an
// error that is ErrUnavailable already is returned as it is.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return &UnavailableError{Err: err}
}

// ErrOutcomeUnknown marks a write whose outcome the store cannot tell: the
// commit was sent but its answer never came (the connection broke, the
// server shut down, the deadline ran out while it was on its way). The
// change may or may not have been made, so the call may not simply be made
// again: a create without an id to deduplicate by would then be made
// twice. It is not ErrUnavailable. The gateway answers it as a severe
// failure (500 with an incident code) whose message says to check before
// repeating. Match it with errors.Is; *OutcomeUnknownError carries it.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// OutcomeUnknownError wraps the error of a commit whose outcome is
// unknown (ErrOutcomeUnknown), keeping the cause in the chain for the
// logs. Its message is the cause's: the gateway never puts it in an
// answer.
type OutcomeUnknownError struct{ Err error }

func (e *OutcomeUnknownError) Error() string {
	return "commit outcome unknown: " + e.Err.Error()
}

// Unwrap gives errors.Is and errors.As both ErrOutcomeUnknown and the cause.
func (e *OutcomeUnknownError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.Err} }

// OutcomeUnknown wraps err as an *OutcomeUnknownError; nil stays nil.
func OutcomeUnknown(err error) error {
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	return &OutcomeUnknownError{Err: err}
}
