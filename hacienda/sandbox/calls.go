package sandbox

import (
	"net/http"
	"sync"
	"time"
)

// Defaults of the call record's bounds (Options.MaxCallTimes and
// Options.MaxCallUsers). With them the record holds at most 4 Mi times,
// 32 MiB, however long the sandbox runs.
const (
	DefaultMaxCallTimes = 4096
	DefaultMaxCallUsers = 1024
)

// Calls is what the reception API was asked, per user and per key (GET
// /_sandbox/calls): what a test or an operator needs to tell whether a
// client kept to a pace, and whether it sent a document more than once.
type Calls struct {
	// Users holds each tax-authority user's authenticated reception calls
	// (POST recepcion and GET recepcion/{clave}, whatever their answer),
	// by the user name its token was granted to.
	Users map[string]UserCalls `json:"users"`
	// Posts counts, per key (the clave, or clave-consecutivoReceptor), the
	// authenticated, well-formed reception POSTs that carried it: 1 for a
	// document received once, more when it was sent again (each repeat
	// answered 400 as a duplicate). A key is kept as long as its document
	// (Options.MaxDocuments); the POSTs are counted since the sandbox
	// started (a document a Store kept from before counts 0 until it is
	// sent again).
	Posts map[string]int64 `json:"posts"`
	// Untracked counts the calls of the users past MaxUsers, whose calls
	// are not recorded.
	Untracked int64 `json:"untracked"`
	// MaxTimes and MaxUsers are the record's bounds.
	MaxTimes int `json:"maxTimesPerUser"`
	MaxUsers int `json:"maxUsers"`
}

// UserCalls is one user's record.
type UserCalls struct {
	// Submissions and StatusQueries count every call, the ones whose times
	// were forgotten included.
	Submissions   int64 `json:"submissions"`
	StatusQueries int64 `json:"statusQueries"`
	// Times are when the latest calls arrived (on the sandbox's clock),
	// oldest first: at most MaxTimes, the older ones forgotten.
	Times []time.Time `json:"times"`
}

// callLog records the calls. It is safe for concurrent use.
type callLog struct {
	maxTimes, maxUsers int

	mu        sync.Mutex
	users     map[string]*callRing
	untracked int64
}

// callRing is one user's latest call times, a ring of at most maxTimes.
type callRing struct {
	times                      []int64 // unix nanoseconds
	next                       int     // where the next time goes, once full
	submissions, statusQueries int64
}

// newCallLog returns a record with the given bounds (zero or less: the
// defaults).
func newCallLog(maxTimes, maxUsers int) *callLog {
	if maxTimes <= 0 {
		maxTimes = DefaultMaxCallTimes
	}
	if maxUsers <= 0 {
		maxUsers = DefaultMaxCallUsers
	}
	return &callLog{maxTimes: maxTimes, maxUsers: maxUsers, users: map[string]*callRing{}}
}

// add records a call of user at t; submit tells a reception POST from a
// status GET.
func (l *callLog) add(user string, t time.Time, submit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.users[user]
	if r == nil {
		if len(l.users) >= l.maxUsers {
			l.untracked++
			return
		}
		r = &callRing{}
		l.users[user] = r
	}
	if submit {
		r.submissions++
	} else {
		r.statusQueries++
	}
	if len(r.times) < l.maxTimes {
		r.times = append(r.times, t.UnixNano())
		return
	}
	r.times[r.next] = t.UnixNano()
	r.next = (r.next + 1) % len(r.times)
}

// snapshot copies the record into c.
func (l *callLog) snapshot(c *Calls) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Users = make(map[string]UserCalls, len(l.users))
	for user, r := range l.users {
		u := UserCalls{Submissions: r.submissions, StatusQueries: r.statusQueries, Times: make([]time.Time, 0, len(r.times))}
		for i := range r.times {
			u.Times = append(u.Times, time.Unix(0, r.times[(r.next+i)%len(r.times)]).UTC())
		}
		c.Users[user] = u
	}
	c.Untracked = l.untracked
	c.MaxTimes, c.MaxUsers = l.maxTimes, l.maxUsers
}

// Calls returns the record of the reception API's calls.
func (s *Sandbox) Calls() Calls {
	var c Calls
	s.calls.snapshot(&c)
	s.docMu.RLock()
	defer s.docMu.RUnlock()
	c.Posts = make(map[string]int64, len(s.docs))
	for k, d := range s.docs {
		c.Posts[k] = d.posts
	}
	return c
}

// handleCalls is GET /_sandbox/calls.
func (s *Sandbox) handleCalls(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Calls())
}
