package export

import (
	"errors"
	"slices"
	"testing"
	"time"

	"facturad/hacienda/api"
)

// TestCheckPeriod: the export's period rule, the only place it is
// checked: both ends required, hasta not before desde, at most MaxSpan.
func TestCheckPeriod(t *testing.T) {
	d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var zero time.Time
	tests := []struct {
		name         string
		desde, hasta time.Time
		fields       []string // none: a period
	}{
		{"ok/a month", d, d.AddDate(0, 1, 0), nil},
		{"ok/366 days", d, d.Add(MaxSpan), nil},
		{"ok/one instant", d, d, nil},
		{"error/neither", zero, zero, []string{"desde", "hasta"}},
		{"error/no desde", zero, d, []string{"desde"}},
		{"error/no hasta", d, zero, []string{"hasta"}},
		{"error/hasta before desde", d, d.Add(-time.Microsecond), []string{"hasta"}},
		{"error/longer than MaxSpan", d, d.Add(MaxSpan + time.Microsecond), []string{"hasta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPeriod(tt.desde, tt.hasta)
			if tt.fields == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *api.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%v, want a FieldError", err)
			}
			var got []string
			for k := range fe.Fields {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v", got, tt.fields)
			}
		})
	}
}
