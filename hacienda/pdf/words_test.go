package pdf

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		amount, currency, want string
	}{
		{"120500.50", "CRC", "CIENTO VEINTE MIL QUINIENTOS COLONES CON 50/100"},
		{"0", "CRC", "CERO COLONES CON 00/100"},
		{"0.5", "CRC", "CERO COLONES CON 50/100"},
		{"1", "CRC", "UN COLÓN CON 00/100"},
		{"1.01", "CRC", "UN COLÓN CON 01/100"},
		{"2", "CRC", "DOS COLONES CON 00/100"},
		{"15", "CRC", "QUINCE COLONES CON 00/100"},
		{"16", "CRC", "DIECISÉIS COLONES CON 00/100"},
		{"20", "CRC", "VEINTE COLONES CON 00/100"},
		{"21", "CRC", "VEINTIÚN COLONES CON 00/100"},
		{"22", "CRC", "VEINTIDÓS COLONES CON 00/100"},
		{"23", "CRC", "VEINTITRÉS COLONES CON 00/100"},
		{"26", "CRC", "VEINTISÉIS COLONES CON 00/100"},
		{"30", "CRC", "TREINTA COLONES CON 00/100"},
		{"31", "CRC", "TREINTA Y UN COLONES CON 00/100"},
		{"99", "CRC", "NOVENTA Y NUEVE COLONES CON 00/100"},
		{"100", "CRC", "CIEN COLONES CON 00/100"},
		{"101", "CRC", "CIENTO UN COLONES CON 00/100"},
		{"115", "CRC", "CIENTO QUINCE COLONES CON 00/100"},
		{"200", "CRC", "DOSCIENTOS COLONES CON 00/100"},
		{"555", "CRC", "QUINIENTOS CINCUENTA Y CINCO COLONES CON 00/100"},
		{"777", "CRC", "SETECIENTOS SETENTA Y SIETE COLONES CON 00/100"},
		{"999", "CRC", "NOVECIENTOS NOVENTA Y NUEVE COLONES CON 00/100"},
		{"1000", "CRC", "MIL COLONES CON 00/100"},
		{"1001", "CRC", "MIL UN COLONES CON 00/100"},
		{"2000", "CRC", "DOS MIL COLONES CON 00/100"},
		{"21000", "CRC", "VEINTIÚN MIL COLONES CON 00/100"},
		{"31000", "CRC", "TREINTA Y UN MIL COLONES CON 00/100"},
		{"100000", "CRC", "CIEN MIL COLONES CON 00/100"},
		{"101000", "CRC", "CIENTO UN MIL COLONES CON 00/100"},
		{"999999.99", "CRC", "NOVECIENTOS NOVENTA Y NUEVE MIL NOVECIENTOS NOVENTA Y NUEVE COLONES CON 99/100"},
		{"1000000", "CRC", "UN MILLÓN DE COLONES CON 00/100"},
		{"1000000.75", "CRC", "UN MILLÓN DE COLONES CON 75/100"},
		{"1000001", "CRC", "UN MILLÓN UN COLONES CON 00/100"},
		{"1000100", "CRC", "UN MILLÓN CIEN COLONES CON 00/100"},
		{"1001000", "CRC", "UN MILLÓN MIL COLONES CON 00/100"},
		{"2000000", "CRC", "DOS MILLONES DE COLONES CON 00/100"},
		{"21000000", "CRC", "VEINTIÚN MILLONES DE COLONES CON 00/100"},
		{"1000000000", "CRC", "MIL MILLONES DE COLONES CON 00/100"},
		{"2500000000", "CRC", "DOS MIL QUINIENTOS MILLONES DE COLONES CON 00/100"},
		{"1000000000000", "CRC", "UN BILLÓN DE COLONES CON 00/100"},
		{"1000000000001", "CRC", "UN BILLÓN UN COLONES CON 00/100"},
		{"1000001000000", "CRC", "UN BILLÓN UN MILLÓN DE COLONES CON 00/100"},
		// The largest v4.4 amount: 13 integer digits and 5 decimals.
		{"9999999999999.99999", "CRC", "DIEZ BILLONES DE COLONES CON 00/100"},
		{"9999999999999.99", "CRC", "NUEVE BILLONES NOVECIENTOS NOVENTA Y NUEVE MIL NOVECIENTOS NOVENTA Y NUEVE MILLONES " +
			"NOVECIENTOS NOVENTA Y NUEVE MIL NOVECIENTOS NOVENTA Y NUEVE COLONES CON 99/100"},
		{"1234567890123.45", "CRC", "UN BILLÓN DOSCIENTOS TREINTA Y CUATRO MIL QUINIENTOS SESENTA Y SIETE MILLONES " +
			"OCHOCIENTOS NOVENTA MIL CIENTO VEINTITRÉS COLONES CON 45/100"},
		{"1000000000000000000", "CRC", "UN TRILLÓN DE COLONES CON 00/100"},
		{"1000000000000000000000000", "CRC", "UN CUATRILLÓN DE COLONES CON 00/100"},
		// Rounding to cents, half away from zero.
		{"10.12345", "CRC", "DIEZ COLONES CON 12/100"},
		{"10.125", "CRC", "DIEZ COLONES CON 13/100"},
		{"10.12499", "CRC", "DIEZ COLONES CON 12/100"},
		{"0.995", "CRC", "UN COLÓN CON 00/100"},
		{"0.00499", "CRC", "CERO COLONES CON 00/100"},
		{"999999.995", "CRC", "UN MILLÓN DE COLONES CON 00/100"},
		{"-10.125", "CRC", "MENOS DIEZ COLONES CON 13/100"},
		// Other currencies.
		{"1", "USD", "UN DÓLAR ESTADOUNIDENSE CON 00/100"},
		{"1500.1", "USD", "MIL QUINIENTOS DÓLARES ESTADOUNIDENSES CON 10/100"},
		{"3000000", "USD", "TRES MILLONES DE DÓLARES ESTADOUNIDENSES CON 00/100"},
		{"21", "eur", "VEINTIÚN EUROS CON 00/100"},
		{"1", "EUR", "UN EURO CON 00/100"},
		{"1200", "MXN", "MIL DOSCIENTOS PESOS MEXICANOS CON 00/100"},
		{"1200", "GBP", "MIL DOSCIENTOS GBP CON 00/100"},
		{"1000000", "GBP", "UN MILLÓN GBP CON 00/100"},
		{"7", "", "SIETE CON 00/100"},
	} {
		t.Run("ok/"+tc.amount+" "+tc.currency, func(t *testing.T) {
			got, err := Words(decimal.RequireFromString(tc.amount), tc.currency)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Words(%s, %s)\n got %q\nwant %q", tc.amount, tc.currency, got, tc.want)
			}
		})
	}
}

func TestWordsTooLarge(t *testing.T) {
	_, err := Words(decimal.New(1, maxWordsExponent), "CRC")
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("10^30: %v, want ErrTooLarge", err)
	}
	if _, err := Words(decimal.New(1, maxWordsExponent).Sub(decimal.New(1, -2)), "CRC"); err == nil {
		// 10^30 − 0.01 rounds to itself and has 30 integer digits of nines: still in range.
	} else {
		t.Fatalf("10^30 − 0.01: %v", err)
	}
}

// wordValues are the numbers the words stand for, to read words back.
var wordValues = map[string]int64{
	"CERO": 0, "UN": 1, "DOS": 2, "TRES": 3, "CUATRO": 4, "CINCO": 5, "SEIS": 6, "SIETE": 7, "OCHO": 8, "NUEVE": 9,
	"DIEZ": 10, "ONCE": 11, "DOCE": 12, "TRECE": 13, "CATORCE": 14, "QUINCE": 15, "DIECISÉIS": 16, "DIECISIETE": 17,
	"DIECIOCHO": 18, "DIECINUEVE": 19, "VEINTE": 20, "VEINTIÚN": 21, "VEINTIDÓS": 22, "VEINTITRÉS": 23,
	"VEINTICUATRO": 24, "VEINTICINCO": 25, "VEINTISÉIS": 26, "VEINTISIETE": 27, "VEINTIOCHO": 28, "VEINTINUEVE": 29,
	"TREINTA": 30, "CUARENTA": 40, "CINCUENTA": 50, "SESENTA": 60, "SETENTA": 70, "OCHENTA": 80, "NOVENTA": 90,
	"CIEN": 100, "CIENTO": 100, "DOSCIENTOS": 200, "TRESCIENTOS": 300, "CUATROCIENTOS": 400, "QUINIENTOS": 500,
	"SEISCIENTOS": 600, "SETECIENTOS": 700, "OCHOCIENTOS": 800, "NOVECIENTOS": 900,
}

// readWords is an independent reader of the words Words writes (the
// integer part, up to the currency): a small parser of the Spanish long
// scale, used to check Words over many numbers.
func readWords(t *testing.T, s string) *big.Int {
	t.Helper()
	total := new(big.Int)
	group := int64(0) // below a million
	small := int64(0) // below a thousand
	for _, w := range strings.Fields(s) {
		switch w {
		case "Y":
		case "MIL":
			if small == 0 {
				small = 1
			}
			group += small * 1000
			small = 0
		case "MILLÓN", "MILLONES", "BILLÓN", "BILLONES", "TRILLÓN", "TRILLONES", "CUATRILLÓN", "CUATRILLONES":
			exp := map[string]int64{"MILLÓN": 6, "MILLONES": 6, "BILLÓN": 12, "BILLONES": 12, "TRILLÓN": 18, "TRILLONES": 18,
				"CUATRILLÓN": 24, "CUATRILLONES": 24}[w]
			// A scale word multiplies what came since the previous, larger
			// scale word: MIL MILLONES is 10^9.
			g := big.NewInt(group + small)
			g.Mul(g, new(big.Int).Exp(big.NewInt(10), big.NewInt(exp), nil))
			total.Add(total, g)
			group, small = 0, 0
		default:
			v, ok := wordValues[w]
			if !ok {
				t.Fatalf("unknown word %q in %q", w, s)
			}
			small += v
		}
	}
	return total.Add(total, big.NewInt(group+small))
}

// TestWordsReadBack writes every number of a wide sample in words and
// reads it back with an independent parser: each must come back as
// itself, and the words must be valid UTF-8 that Windows-1252 can print.
func TestWordsReadBack(t *testing.T) {
	check := func(n *big.Int) {
		t.Helper()
		s, err := Words(decimal.NewFromBigInt(n, 0), "")
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(s) || !printable(s) {
			t.Fatalf("%s: %q is not printable in Windows-1252", n, s)
		}
		words := strings.TrimSuffix(s, " CON 00/100")
		if got := readWords(t, words); got.Cmp(n) != 0 {
			t.Fatalf("%s reads back as %s: %q", n, got, s)
		}
	}
	for i := int64(0); i <= 100_000; i++ {
		check(big.NewInt(i))
	}
	// Every group pattern at every scale up to 10^29.
	seed := uint64(1)
	for range 20_000 {
		seed = seed*6364136223846793005 + 1442695040888963407
		n := new(big.Int).SetUint64(seed)
		n.Mul(n, new(big.Int).SetUint64(seed>>11))
		n.Mul(n, new(big.Int).SetUint64(seed>>7))
		n.Mod(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(1+seed%29)), nil))
		check(n)
	}
}

// FuzzWords: any decimal below 10^30 is written without error, reads back
// as its value rounded to cents, and is printable in Windows-1252.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"0", "1", "21.005", "1000000", "9999999999999.99999", "-3.5", "123456789012345678901234567.89"} {
		f.Add(s, "CRC")
	}
	f.Fuzz(func(t *testing.T, s, currency string) {
		d, err := decimal.NewFromString(s)
		if err != nil || d.Abs().Cmp(decimal.New(1, 29)) >= 0 || d.Exponent() < -40 {
			return
		}
		got, err := Words(d, currency)
		if err != nil {
			t.Fatalf("Words(%s): %v", s, err)
		}
		cents := d.Round(2)
		if !strings.HasSuffix(got, cents.Abs().Sub(cents.Abs().Truncate(0)).StringFixed(2)[2:]+"/100") {
			t.Fatalf("Words(%s) = %q: wrong cents", s, got)
		}
		if cents.Sign() < 0 != strings.HasPrefix(got, "MENOS ") {
			t.Fatalf("Words(%s) = %q: wrong sign", s, got)
		}
		if _, ok := currencyNames[strings.ToUpper(strings.TrimSpace(currency))]; ok {
			return
		}
		if strings.TrimSpace(currency) != "" {
			return // an unknown code is copied, and may hold anything
		}
		words := strings.TrimPrefix(got[:strings.Index(got, " CON ")], "MENOS ")
		if n := readWords(t, words); n.Cmp(cents.Abs().Truncate(0).BigInt()) != 0 {
			t.Fatalf("Words(%s) = %q reads back as %s", s, got, n)
		}
	})
}
