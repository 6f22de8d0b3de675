package pdf

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/shopspring/decimal"
)

// This file writes an amount in Spanish words, the way Costa Rican
// invoices and cheques spell their total: "CIENTO VEINTE MIL QUINIENTOS
// COLONES CON 50/100". The integer part is in words (upper case, with the
// accents Spanish keeps on capitals), the cents in figures over 100.

// currencyName is how an amount of a currency is named: the singular
// after exactly one unit ("UN COLÓN") and the plural otherwise.
type currencyName struct{ singular, plural string }

// currencyNames are the currencies the words name. They are all masculine
// nouns, which the apocopated "UN" agrees with. Any other currency is
// named by its ISO 4217 code ("MIL DOSCIENTOS MXN CON 00/100"): an
// invented Spanish name would be worse than the code the tax authority's
// own list uses.
var currencyNames = map[string]currencyName{
	"CRC": {"COLÓN", "COLONES"},
	"USD": {"DÓLAR ESTADOUNIDENSE", "DÓLARES ESTADOUNIDENSES"},
	"EUR": {"EURO", "EUROS"},
	"CAD": {"DÓLAR CANADIENSE", "DÓLARES CANADIENSES"},
	"MXN": {"PESO MEXICANO", "PESOS MEXICANOS"},
	"JPY": {"YEN", "YENES"},
	"CHF": {"FRANCO SUIZO", "FRANCOS SUIZOS"},
}

// maxWordsExponent bounds the amounts written in words: below 10^30 (the
// long scale's cuatrillones). A v4.4 amount has at most 13 integer
// digits; anything larger is an error rather than a guess.
const maxWordsExponent = 30

// ErrTooLarge is returned by Words for an amount of 10^30 or more.
var ErrTooLarge = errors.New("amount too large to write in words")

// Words writes an amount of a currency in Spanish words with its cents
// over 100: 120500.5 CRC is "CIENTO VEINTE MIL QUINIENTOS COLONES CON
// 50/100".
//
// The amount is first rounded to cents, half away from zero (the rounding
// of v4.4 amounts): 0.995 is "UN COLÓN CON 00/100" and 10.12345 is "DIEZ
// COLONES CON 12/100". A printed document also shows the exact amount in
// figures with all its decimals, so the words never stand alone for an
// amount of more than two decimals.
//
// Spanish rules followed: "UNO" becomes "UN" before a noun ("UN COLÓN",
// "VEINTIÚN MIL", "TREINTA Y UN MILLONES"); 1000 is "MIL", never "UN MIL";
// the long scale (10^6 MILLÓN, 10^9 MIL MILLONES, 10^12 BILLÓN, 10^18
// TRILLÓN, 10^24 CUATRILLÓN); "DE" goes between a round number of
// millions and the currency ("UN MILLÓN DE COLONES", "DOS MIL MILLONES DE
// COLONES") and not otherwise ("UN MILLÓN CIEN COLONES"). A negative
// amount starts with "MENOS". Currency codes are compared in upper case.
func Words(amount decimal.Decimal, currency string) (string, error) {
	cents := amount.Round(2)
	neg := cents.Sign() < 0
	cents = cents.Abs()
	whole := cents.Truncate(0)
	frac := cents.Sub(whole).Shift(2).IntPart() // 0..99, exact after Round(2)
	n := whole.BigInt()
	if n.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(maxWordsExponent), nil)) >= 0 {
		return "", fmt.Errorf("%w: %s", ErrTooLarge, amount.String())
	}

	var b strings.Builder
	if neg {
		b.WriteString("MENOS ")
	}
	roundMillions := integerWords(&b, n)
	code := strings.ToUpper(strings.TrimSpace(currency))
	name, known := currencyNames[code]
	switch {
	case !known && code != "":
		b.WriteString(" " + code)
	case !known:
	case n.Cmp(big.NewInt(1)) == 0:
		b.WriteString(" " + name.singular)
	default:
		if roundMillions {
			b.WriteString(" DE")
		}
		b.WriteString(" " + name.plural)
	}
	fmt.Fprintf(&b, " CON %02d/100", frac)
	return b.String(), nil
}

// scales are the long-scale names of the groups of six digits above the
// first: 10^6, 10^12, 10^18 and 10^24.
var scales = []currencyName{
	{"MILLÓN", "MILLONES"},
	{"BILLÓN", "BILLONES"},
	{"TRILLÓN", "TRILLONES"},
	{"CUATRILLÓN", "CUATRILLONES"},
}

// integerWords writes n (0 ≤ n < 10^30) in words, apocopated as before a
// noun ("VEINTIÚN", not "VEINTIUNO"), and reports whether it is a round
// number of millions or more (its last six digits zero, n ≥ 10^6), which
// takes "DE" before the noun.
func integerWords(b *strings.Builder, n *big.Int) (roundMillions bool) {
	if n.Sign() == 0 {
		b.WriteString("CERO")
		return false
	}
	// Split into groups of six digits, least significant first.
	var groups []int64
	million := big.NewInt(1_000_000)
	rest := new(big.Int).Set(n)
	mod := new(big.Int)
	for rest.Sign() > 0 {
		rest.QuoRem(rest, million, mod)
		groups = append(groups, mod.Int64())
	}
	first := true
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g == 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		if i == 0 {
			thousandsWords(b, g)
			continue
		}
		s := scales[i-1]
		if g == 1 {
			b.WriteString("UN " + s.singular)
			continue
		}
		thousandsWords(b, g)
		b.WriteString(" " + s.plural)
	}
	return groups[0] == 0
}

// thousandsWords writes 1 ≤ n ≤ 999,999, apocopated.
func thousandsWords(b *strings.Builder, n int64) {
	hi, lo := n/1000, n%1000
	if hi > 0 {
		if hi > 1 {
			b.WriteString(hundredsWords(hi))
			b.WriteByte(' ')
		}
		b.WriteString("MIL")
		if lo > 0 {
			b.WriteByte(' ')
		}
	}
	if lo > 0 {
		b.WriteString(hundredsWords(lo))
	}
}

var (
	units = [...]string{"", "UN", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE",
		"DIEZ", "ONCE", "DOCE", "TRECE", "CATORCE", "QUINCE", "DIECISÉIS", "DIECISIETE", "DIECIOCHO", "DIECINUEVE",
		"VEINTE", "VEINTIÚN", "VEINTIDÓS", "VEINTITRÉS", "VEINTICUATRO", "VEINTICINCO", "VEINTISÉIS", "VEINTISIETE",
		"VEINTIOCHO", "VEINTINUEVE"}
	tens     = [...]string{"", "", "", "TREINTA", "CUARENTA", "CINCUENTA", "SESENTA", "SETENTA", "OCHENTA", "NOVENTA"}
	hundreds = [...]string{"", "CIENTO", "DOSCIENTOS", "TRESCIENTOS", "CUATROCIENTOS", "QUINIENTOS", "SEISCIENTOS",
		"SETECIENTOS", "OCHOCIENTOS", "NOVECIENTOS"}
)

// hundredsWords writes 1 ≤ n ≤ 999, apocopated ("UN", "VEINTIÚN",
// "TREINTA Y UN"): every place it is used stands before a noun (MIL,
// MILLONES, the currency).
func hundredsWords(n int64) string {
	if n == 100 {
		return "CIEN"
	}
	h, r := n/100, n%100
	var parts []string
	if h > 0 {
		parts = append(parts, hundreds[h])
	}
	switch {
	case r == 0:
	case r < 30:
		parts = append(parts, units[r])
	case r%10 == 0:
		parts = append(parts, tens[r/10])
	default:
		parts = append(parts, tens[r/10]+" Y "+units[r%10])
	}
	return strings.Join(parts, " ")
}
