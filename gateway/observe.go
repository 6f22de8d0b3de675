package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"facturad/hacienda/msg"
)

// ErrorAnswer is an error answer as the gateway wrote it: its status, the
// route it answered, its message and its fields' messages before they were
// rendered in the caller's language. It is what ObserveErrorAnswers hands
// to a test.
type ErrorAnswer struct {
	Status int
	// Route is "METHOD /pattern", or "" when no route matched.
	Route string
	// Message is the answer's message: an answer entry of the catalogue.
	Message msg.Message
	// Raw is a message from outside the catalogue (an error's own text),
	// said as it is in every language; "" normally.
	Raw string
	// Fields are a 400's field messages.
	Fields map[string][]msg.Message
	// RawFields are field messages from outside the catalogue; nil
	// normally.
	RawFields map[string][]string
}

// errorAnswers is the observer of ObserveErrorAnswers, or nil.
var errorAnswers atomic.Pointer[func(ErrorAnswer)]

// ObserveErrorAnswers calls f, from the goroutine that writes it, with
// every error answer any Server of the process writes until stop is
// called: the tests use it to hold every error the suite produces to the
// catalogue (CatalogueProblems). One observer is kept at a time: f
// replaces the one before until stop, which puts that one back.
func ObserveErrorAnswers(f func(ErrorAnswer)) (stop func()) {
	prev := errorAnswers.Swap(&f)
	return func() { errorAnswers.CompareAndSwap(&f, prev) }
}

// observeErrorAnswer hands the answer a makes to the observer, if any:
// a is called only then, so that an answer costs nothing more when no
// test observes.
func observeErrorAnswer(a func() ErrorAnswer) {
	if f := errorAnswers.Load(); f != nil {
		(*f)(a())
	}
}

// CatalogueProblems lists what a keeps from being said in Spanish and
// English with stable codes: a message from outside the catalogue, an
// entry of the wrong kind where it stands (a field's message as the
// answer's, say), a status that is not its entry's (the one the OpenAPI
// and docs/errors.md give for its code), or a rendering that fmt could
// not fill. None for an answer wholly of the catalogue.
func CatalogueProblems(a ErrorAnswer) []string {
	var out []string
	where := fmt.Sprintf("%d %s", a.Status, a.Route)
	if a.Raw != "" {
		out = append(out, fmt.Sprintf("%s: message outside the catalogue: %q", where, a.Raw))
	}
	if e := a.Message.Entry(); e != nil && e.Kind() == msg.Answer && e.Status() != a.Status {
		out = append(out, fmt.Sprintf("%s: %s is the catalogue's answer of status %d", where, e.Code(), e.Status()))
	}
	out = append(out, entryProblems(where+": message", a.Message, msg.Answer)...)
	for _, f := range slices.Sorted(maps.Keys(a.RawFields)) {
		for _, m := range a.RawFields[f] {
			out = append(out, fmt.Sprintf("%s: errors.%s: message outside the catalogue: %q", where, f, m))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(a.Fields)) {
		for _, m := range a.Fields[f] {
			out = append(out, entryProblems(where+": errors."+f, m, msg.Field)...)
		}
	}
	return out
}

// entryProblems checks one message against the kind it must be.
func entryProblems(where string, m msg.Message, kind msg.Kind) []string {
	e := m.Entry()
	switch {
	case e == nil:
		return []string{where + ": no message"}
	case e.Kind() != kind:
		return []string{fmt.Sprintf("%s: %s is not an entry of the right kind here", where, e.Code())}
	}
	var out []string
	for _, l := range []msg.Lang{msg.English, msg.Spanish} {
		if s := m.In(l); strings.Contains(s, "%!") {
			out = append(out, fmt.Sprintf("%s: %s renders badly in %s: %q", where, e.Code(), l, s))
		}
	}
	return out
}

// CatalogueWatch collects what the error answers say outside the
// catalogue (CatalogueProblems) while it watches: a test binary's TestMain
// starts one before its tests and fails the run on what Stop returns.
type CatalogueWatch struct {
	mu       sync.Mutex
	problems map[string]bool
	stop     func()
}

// WatchCatalogue starts a CatalogueWatch over every Server of the process.
func WatchCatalogue() *CatalogueWatch {
	w := &CatalogueWatch{problems: map[string]bool{}}
	w.stop = ObserveErrorAnswers(func(a ErrorAnswer) {
		ps := CatalogueProblems(a)
		if len(ps) == 0 {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, p := range ps {
			w.problems[p] = true
		}
	})
	return w
}

// Stop ends the watch and returns the problems seen, each once, sorted.
func (w *CatalogueWatch) Stop() []string {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.problems))
}
