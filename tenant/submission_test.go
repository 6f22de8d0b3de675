package tenant

import "testing"

// TestPhaseTable: every state has exactly one usual phase, in which it
// is shown, and only 01 and 02 are final, in phases and states alike.
func TestPhaseTable(t *testing.T) {
	for _, s := range States() {
		ph := PhaseFor(s)
		if ph == "" || ph.Estado() != s {
			t.Errorf("%s: usual phase %q shows %q", s, ph, ph.Estado())
		}
		n := 0
		for _, r := range phaseTable {
			if r.estado == s && r.usual {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s has %d usual phases", s, n)
		}
		if want := s == StateAccepted || s == StateRejected; s.Final() != want {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
	for _, ph := range Phases() {
		if ph.Estado().Humanized() == "" {
			t.Errorf("phase %s shows no state (%q)", ph, ph.Estado())
		}
	}
	if PhaseFor("99") != "" || State("99").Humanized() != "" || EventState("99") != "" {
		t.Error("a code that is not a state has a phase or a name")
	}
}
