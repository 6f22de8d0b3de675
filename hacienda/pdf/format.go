package pdf

import (
	"strings"
	"time"

	"facturad/hacienda"
)

// Figures are written the Spanish way: a point between thousands and a
// comma before the decimals (120.500,50). Money shows at least two
// decimals and every further one the amount carries, up to the five v4.4
// allows (1.234,56789), so that the printed figure is the amount of the
// XML, never a rounding of it. Quantities and rates show only the decimals
// they carry (2; 1,5; 13).

// money formats a money amount; an absent amount is "".
func money(a hacienda.Amount) string {
	if !a.IsSet() {
		return ""
	}
	return figures(a, 2)
}

// Money formats a money amount as the printed document writes it
// (120.500,50), for what quotes the document beside its PDF (the
// e-mail's total); an absent amount is "".
func Money(a hacienda.Amount) string { return money(a) }

// quantity formats a quantity or a rate; an absent amount is "".
func quantity(a hacienda.Amount) string {
	if !a.IsSet() {
		return ""
	}
	return figures(a, 0)
}

// figures writes a with at least minPlaces decimals, trailing zeros beyond
// them trimmed.
func figures(a hacienda.Amount, minPlaces int) string {
	d := a.Decimal()
	s := d.Abs().StringFixed(hacienda.MoneyPlaces)
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	for len(frac) < minPlaces {
		frac += "0"
	}
	var b strings.Builder
	if d.Sign() < 0 {
		b.WriteByte('-')
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte(',')
		b.WriteString(frac)
	}
	return b.String()
}

// date writes an instant in Costa Rica time as dd/mm/yyyy hh:mm:ss.
func dateTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(hacienda.CostaRica).Format("02/01/2006 15:04:05")
}

// date writes a day in Costa Rica time as dd/mm/yyyy.
func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(hacienda.CostaRica).Format("02/01/2006")
}
