package api

import (
	"time"

	"facturad/hacienda"
)

// DateLayout is the contract's local date-time without zone.
const DateLayout = "2006-01-02T15:04:05"

// NotSet is the date-time that means "not set".
const NotSet = "0001-01-01T00:00:00"

// LocalTime formats t as a Costa Rica local date-time; the zero time is
// NotSet.
func LocalTime(t time.Time) string {
	if t.IsZero() {
		return NotSet
	}
	return t.In(hacienda.CostaRica).Format(DateLayout)
}
