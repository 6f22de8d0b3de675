package registry

import (
	"testing"
	"time"
)

func mustDate(t testing.TB, s string) time.Time {
	t.Helper()
	d, err := time.ParseInLocation(time.DateOnly, s, costaRica)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
