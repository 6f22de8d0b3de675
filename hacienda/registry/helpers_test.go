package registry

import (
	"testing"
	"time"

	"facturad/hacienda"
)

func mustDate(t testing.TB, s string) time.Time {
	t.Helper()
	d, err := time.ParseInLocation(time.DateOnly, s, hacienda.CostaRica)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
