package tenant

import (
	"context"
	"time"
)

// CredentialStopStore keeps the companies whose tax-authority credentials
// the token service refused, so that every replica's background worker
// tries them again at one slow pace, and a company whose credentials work
// again gets its stopped documents moved on at once.
//
// A document stopped on its company's credentials is a 05 with no next
// attempt (NextAttemptAt zero): no claim takes it, so no replica holds it,
// and making it due is safe at any moment. Its company's stop is a row of
// its own: when its probe is due, one of the company's stopped documents is
// made due, and the background worker's attempt on it tries the
// credentials. A receiver's message (ReceivedDocument) stopped so is
// treated alike: "stopped documents" below are the company's documents and
// its messages, a message being probed when no document is left. Both
// store adapters implement it.
type CredentialStopStore interface {
	// StopOnCredentials records that the company's credentials were
	// refused at now, its first probe due at next. A company already
	// stopped keeps its record (its probe time and attempts). A stop that
	// begins records ev (credenciales.rechazadas, when not nil) in the
	// same transaction, as TenantEventStore.RecordTenantEvent does, so
	// that each stop is announced once however many refusals, on however
	// many replicas, begin it at once; a stop that was already there
	// records nothing.
	StopOnCredentials(ctx context.Context, companyID int64, now, next time.Time, ev *TenantEvent) error
	// ProbeCredentialStops takes up to limit companies whose probe is due
	// at now, the longest due first, in one transaction: each one's next
	// probe moves to now + min(base·2ⁿ, max), n being its probes with this
	// one (the first probe, due base after the stop, is followed by one
	// 2·base later, then 4·base…), and its oldest stopped document (05, no next
	// attempt) is made due at now. A company with no stopped document left
	// is forgotten. It returns the companies whose document it made due.
	ProbeCredentialStops(ctx context.Context, now time.Time, base, max time.Duration, limit int) ([]int64, error)
	// ResumeCredentialStop forgets the company's stop and makes each of its
	// stopped documents (05, no next attempt) due at now. A company that is
	// not stopped is left alone (0, nil): the call is cheap enough to make
	// after every login that worked.
	ResumeCredentialStop(ctx context.Context, companyID int64, now time.Time) (int, error)
	// RequeueStopped makes due at now the documents not settled (00, 04,
	// 05) that wait for their company (no next attempt): the one with
	// q.Clave, or every one of q.CompanyID, or every one in the store when
	// both are empty. Without a clave, the credential stops of the companies
	// concerned are forgotten (nothing is left for them to probe), and
	// their messages are made due too (a clave names a document only). It
	// returns how many documents and messages it made due.
	RequeueStopped(ctx context.Context, q RequeueQuery, now time.Time) (int, error)
}

// RequeueQuery selects the stopped documents RequeueStopped moves on.
type RequeueQuery struct {
	CompanyID int64  // 0: any company
	Clave     string // "": any document
}

// ProbeWait is the wait before a company's probe after n probes:
// base·2ⁿ, at most max. Both store adapters compute it so.
func ProbeWait(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
