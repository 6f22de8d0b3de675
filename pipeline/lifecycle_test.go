package pipeline

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/recepcion"
	"facturad/tenant"
)

// TestTransitionTable pins the lifecycle: for every transition, every
// starting phase and every target phase, move succeeds exactly where this
// table (written apart from lifecycle.go) says, sets the phase, estado,
// reason and next attempt when it does, and leaves the row untouched when
// it does not.
func TestTransitionTable(t *testing.T) {
	all := tenant.Phases()
	p05 := []tenant.Phase{held, retrying, credentials}
	table := []struct {
		t        transition
		from, to []tenant.Phase
	}{
		{tHeld, []tenant.Phase{numbered, stopped}, []tenant.Phase{held}},
		{tStopped, []tenant.Phase{numbered, stopped}, []tenant.Phase{stopped}},
		{tRetryLater, []tenant.Phase{numbered, stopped}, []tenant.Phase{numbered}},
		{tSubmitted, p05, []tenant.Phase{submitted}},
		{tNotTaken, p05, []tenant.Phase{retrying, credentials, refused}},
		{tRescheduled, []tenant.Phase{credentials}, []tenant.Phase{credentials}},
		{tUnknown, []tenant.Phase{submitted}, []tenant.Phase{retrying}},
		{tAskFailed, append([]tenant.Phase{submitted}, p05...), []tenant.Phase{submitted, retrying, credentials}},
		{tJudged, []tenant.Phase{numbered, stopped, held, retrying, credentials, submitted, refused, failed},
			[]tenant.Phase{accepted, rejected, failed, submitted}},
	}
	if len(table) != len(transitions) {
		t.Fatalf("the table has %d transitions, the lifecycle %d", len(table), len(transitions))
	}
	next := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, row := range table {
		for _, from := range all {
			for _, to := range all {
				s := tenant.Submission{Phase: from, Estado: from.Estado(), From: from, LastError: "before", NextAttemptAt: next.Add(-time.Hour)}
				err := move(&s, row.t, to, "after", next)
				want := slices.Contains(row.from, from) && slices.Contains(row.to, to)
				if row.t.name == tAskFailed.name && from.Estado() != to.Estado() {
					want = false // a failed attempt never changes the estado
				}
				switch {
				case want && err != nil:
					t.Errorf("%s %s→%s: refused: %v", row.t.name, from, to, err)
				case want && (s.Phase != to || s.Estado != to.Estado() || s.LastError != "after" || !s.NextAttemptAt.Equal(next)):
					t.Errorf("%s %s→%s: stored %+v", row.t.name, from, to, s)
				case want && (s.Event == nil || s.From.Estado() != from.Estado()):
					t.Errorf("%s %s→%s: the row is not marked changed from the estado before: %+v (from %s)", row.t.name, from, to, s.Event, s.From)
				case !want && !errors.Is(err, errTransition):
					t.Errorf("%s %s→%s: allowed, want refused", row.t.name, from, to)
				case !want && (s.Phase != from || s.LastError != "before" || s.Event != nil):
					t.Errorf("%s %s→%s: a refused transition changed the row: %+v", row.t.name, from, to, s)
				case !want && !strings.Contains(err.Error(), row.t.name):
					t.Errorf("%s: the refusal does not name the transition: %v", row.t.name, err)
				}
			}
		}
	}
	// Nothing leaves a verdict.
	for _, tr := range transitions {
		for _, final := range []tenant.Phase{accepted, rejected} {
			if slices.Contains(tr.from, final) {
				t.Errorf("%s starts from the final phase %s", tr.name, final)
			}
		}
	}
}

// lifecycleEvent is one thing that may happen to a row, applied the way
// the pipeline applies it.
type lifecycleEvent struct {
	name  string
	apply func(p *Pipeline, w row)
}

// lifecycleEvents are the events that reach a row from outside: the tax
// authority's answers about its key, the result of a submission, a failed
// attempt, and a key it does not know, each through the function of the
// pipeline that records it.
func lifecycleEvents() []lifecycleEvent {
	answer := func(e recepcion.Estado) lifecycleEvent {
		return lifecycleEvent{"answer " + string(e), func(p *Pipeline, w row) {
			p.applyStatus(context.Background(), w, recepcion.Status{Clave: w.key(), Estado: e})
		}}
	}
	outage := &recepcion.TransportError{Op: recepcion.OpSubmit, Kind: recepcion.KindRefused, Retryable: true}
	return []lifecycleEvent{
		answer(recepcion.EstadoAceptado), answer(recepcion.EstadoRechazado), answer(recepcion.EstadoRecibido),
		answer(recepcion.EstadoProcesando), answer(recepcion.EstadoError),
		{"submission taken", func(p *Pipeline, w row) {
			if slices.Contains(notTaken, w.Phase) {
				_, _, _ = p.afterSubmit(context.Background(), w, nil, time.Time{})
			}
		}},
		{"submission not taken", func(p *Pipeline, w row) {
			if slices.Contains(notTaken, w.Phase) {
				_, _, _ = p.afterSubmit(context.Background(), w, outage, time.Time{})
			}
		}},
		{"attempt failed", func(p *Pipeline, w row) {
			if w.Phase == submitted || slices.Contains(notTaken, w.Phase) {
				w.Attempts++
				p.attemptFailed(w, outage, "could not ask")
			}
		}},
		{"unknown to the tax authority", func(p *Pipeline, w row) {
			if w.Phase == submitted {
				p.workerMove(w, tUnknown, retrying, "unknown", time.Time{})
			}
		}},
	}
}

// lifecyclePipeline is a pipeline with what the lifecycle's functions
// read: its clock and timings, and a logger.
func lifecyclePipeline(now time.Time) *Pipeline {
	return &Pipeline{log: quiet, o: Options{Clock: func() time.Time { return now }, Timings: Timings{PollDelay: time.Minute,
		BackoffBase: time.Second, BackoffMax: time.Hour, SafetyPoll: 10 * time.Minute, ErrorFor: time.Hour}}}
}

// TestVerdictsAreFinal drives every (phase, event) pair: a row in 01 or
// 02 is never moved, whatever the tax authority or a failure says later,
// and every other pair ends in a phase whose estado the row shows.
func TestVerdictsAreFinal(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p := lifecyclePipeline(now)
	for _, from := range tenant.Phases() {
		for _, ev := range lifecycleEvents() {
			d := tenant.Document{Clave: "50602122600310112345600100001010000000001100000001",
				Submission: tenant.Submission{Phase: from, Estado: from.Estado(), From: from,
					SignedXML: []byte("<x/>"), SubmittedAt: now.Add(-2 * time.Hour), LastError: "before"}}
			before := d.Submission
			ev.apply(p, docRow(&d))
			s := d.Submission
			if from.Final() && (s.Phase != from || s.Estado != before.Estado || s.LastError != before.LastError || s.Event != nil) {
				t.Errorf("%s, %s: a verdict moved: %+v", from, ev.name, s)
			}
			if s.Estado != s.Phase.Estado() {
				t.Errorf("%s, %s: estado %s in phase %s", from, ev.name, s.Estado, s.Phase)
			}
			if err := s.CheckSave(); err != nil {
				t.Errorf("%s, %s: the store would refuse the result: %v", from, ev.name, err)
			}
		}
	}
}

// TestLifecycleProperty applies random sequences of events to a row from
// each phase: its estado is always its phase's, and once it reaches a
// verdict it never leaves it.
func TestLifecycleProperty(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p := lifecyclePipeline(now)
	events := lifecycleEvents()
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 2000 {
		start := tenant.Phases()[rng.IntN(len(tenant.Phases()))]
		d := tenant.Document{Clave: "50602122600310112345600100001010000000001100000001",
			Submission: tenant.Submission{Phase: start, Estado: start.Estado(), SignedXML: []byte("<x/>"),
				SubmittedAt: now.Add(-time.Duration(rng.IntN(3)) * time.Hour)}}
		var verdict tenant.Phase
		var seq []string
		for range 12 {
			ev := events[rng.IntN(len(events))]
			seq = append(seq, ev.name)
			d.From = d.Phase // as if stored after each step
			d.Event = nil
			ev.apply(p, docRow(&d))
			if d.Estado != d.Phase.Estado() {
				t.Fatalf("run %d %v: estado %s in phase %s", run, seq, d.Estado, d.Phase)
			}
			if err := d.CheckSave(); err != nil {
				t.Fatalf("run %d %v: %v", run, seq, err)
			}
			if verdict != "" && d.Phase != verdict {
				t.Fatalf("run %d %v: left the verdict %s for %s", run, seq, verdict, d.Phase)
			}
			if d.Phase.Final() {
				verdict = d.Phase
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite the lifecycle tables of docs/design/pipeline.md from the code")

// designTables renders the phases and the transitions as the design doc
// shows them.
func designTables() string {
	var b strings.Builder
	b.WriteString("| phase | estado | final |\n|---|---|---|\n")
	for _, ph := range tenant.Phases() {
		final := ""
		if ph.Final() {
			final = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", ph, ph.Estado(), final)
	}
	b.WriteString("\n| transition | from | to | what |\n|---|---|---|---|\n")
	names := func(ps []tenant.Phase) string {
		out := make([]string, len(ps))
		for i, ph := range ps {
			out[i] = string(ph)
		}
		return strings.Join(out, ", ")
	}
	for _, tr := range transitions {
		doc := tr.doc
		if tr.keepEstado {
			doc += " (never changes the estado)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", tr.name, names(tr.from), names(tr.to), doc)
	}
	return b.String()
}

// TestDesignTable keeps the design doc's lifecycle tables those of the
// code: go test ./pipeline -run TestDesignTable -update rewrites them.
func TestDesignTable(t *testing.T) {
	const path = "../docs/design/pipeline.md"
	const begin, end = "<!-- lifecycle tables: generated by TestDesignTable -->\n", "<!-- end of the lifecycle tables -->\n"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no lifecycle tables between %q and %q", path, begin, end)
	}
	want := designTables()
	if got := string(doc[i+len(begin) : j]); got != want {
		if !*update {
			t.Fatalf("the lifecycle tables of %s are not the code's; run go test ./pipeline -run TestDesignTable -update\n%s", path, want)
		}
		out := append(append(append([]byte{}, doc[:i+len(begin)]...), want...), doc[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
