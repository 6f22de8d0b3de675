package hacienda_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
)

func TestEmissionWindow(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, hacienda.CostaRica)
	w := hacienda.DefaultEmissionWindow()
	tests := []struct {
		name      string
		offset    time.Duration // FechaEmision - now
		situacion string
		want      string // part of the message; empty: accepted
	}{
		{"ok/now", 0, "1", ""},
		{"ok/stamped by the service", 0, "1", ""},
		{"ok/skew ahead", 5 * time.Minute, "1", ""},
		{"error/6 hours ahead", 6 * time.Hour, "1", "6h0m0s after"},
		{"error/ahead even sin internet", 6 * time.Minute, "3", "after"},
		{"ok/15 minutes behind", -15 * time.Minute, "1", ""},
		{"error/16 minutes behind normal", -16 * time.Minute, "1", "only for situacion 3"},
		{"error/3 days behind normal", -72 * time.Hour, "1", "72h0m0s before"},
		{"error/3 days behind contingencia", -72 * time.Hour, "2", "situacion 2"},
		{"ok/3 days behind sin internet", -72 * time.Hour, "3", ""},
		{"error/4 days behind sin internet", -96 * time.Hour, "3", "up to 72h0m0s old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := now.Add(tt.offset)
			if tt.name == "ok/stamped by the service" {
				f = time.Time{}
			}
			err := w.Check(f, tt.situacion, now)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ve *hacienda.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			msgs := ve.FieldErrors()["fecha_emision"]
			if len(msgs) != 1 || !strings.Contains(msgs[0], tt.want) {
				t.Fatalf("fecha_emision: %q, want one message containing %q", msgs, tt.want)
			}
		})
	}
}
