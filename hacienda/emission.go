package hacienda

import (
	"time"

	"facturad/hacienda/msg"
)

// EmissionWindow bounds a caller's FechaEmision against the moment the
// service receives the document. The tax authority rejects a document
// whose FechaEmision is later than its reception, or earlier unless its
// situación is 3, sin internet (spec §4 FechaEmision, §10.16, §17 item 12);
// the service refuses such a date at input, before the document takes a
// number. The bounds are this reading's one place (decision 50).
type EmissionWindow struct {
	// Ahead is how far in the future a FechaEmision may be: the clock
	// difference tolerated between the caller and the service.
	Ahead time.Duration
	// Behind is how far in the past it may be with situación 1 (normal)
	// or 2 (contingencia: the electronic document is issued now, the paper
	// one it replaces is named in its reference).
	Behind time.Duration
	// Offline is how far in the past it may be with situación 3 (sin
	// internet), for a document generated while the issuer could not
	// reach the service.
	Offline time.Duration
}

// DefaultEmissionWindow is the window the service applies unless it is
// configured otherwise: 5 minutes ahead, 15 minutes behind, 72 hours
// behind for documents generated without internet.
func DefaultEmissionWindow() EmissionWindow {
	return EmissionWindow{Ahead: 5 * time.Minute, Behind: 15 * time.Minute, Offline: 72 * time.Hour}
}

// Check reports, as a *ValidationError on fecha_emision, a caller's
// FechaEmision f that falls outside the window around now for the given
// situación ("1", "2" or "3"). A zero f (the service stamps the time)
// always passes.
func (w EmissionWindow) Check(f time.Time, situacion string, now time.Time) error {
	if f.IsZero() {
		return nil
	}
	var e errs
	switch d := w.Outside(f, situacion, now); {
	case d > 0:
		e.add("fecha_emision", msg.FechaAhead.With(roundDuration(d), w.Ahead))
	case d < 0 && situacion == SituacionSinInternet:
		e.add("fecha_emision", msg.FechaOldOffline.With(roundDuration(-d), w.Offline))
	case d < 0:
		e.add("fecha_emision", msg.FechaOld.With(roundDuration(-d), situacion, w.Behind))
	}
	return e.err()
}

// Outside reports where f falls against the window around now: how much
// later than now when that is more than Ahead (positive), how much earlier
// when that is more than the bound of its situación, Behind or Offline
// (negative), zero inside. A negative bound is no bound.
func (w EmissionWindow) Outside(f time.Time, situacion string, now time.Time) time.Duration {
	d := f.Sub(now)
	behind := w.Behind
	if situacion == SituacionSinInternet {
		behind = w.Offline
	}
	switch {
	case w.Ahead >= 0 && d > w.Ahead:
		return d
	case behind >= 0 && -d > behind:
		return d
	}
	return 0
}

// roundDuration rounds d for a message: to the second under an hour, to
// the minute above.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Hour {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}
