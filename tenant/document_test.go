package tenant

import "testing"

// TestPrintedMessage: only a rejected document or one in error prints the
// tax authority's message, its details on the lines below.
func TestPrintedMessage(t *testing.T) {
	d := Document{Submission: Submission{MensajeHacienda: "Rechazado", DetalleMensaje: []string{"código 1", "código 2"}}}
	for _, tt := range []struct {
		estado State
		want   string
	}{
		{StateRejected, "Rechazado\ncódigo 1\ncódigo 2"},
		{StateError, "Rechazado\ncódigo 1\ncódigo 2"},
		{StateAccepted, ""},
		{StateSent, ""},
		{StatePending, ""},
	} {
		d.Place(tt.estado)
		if got := d.PrintedMessage(); got != tt.want {
			t.Errorf("estado %s: %q, want %q", tt.estado, got, tt.want)
		}
	}
}
