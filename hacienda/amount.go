package hacienda

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// MoneyPlaces is the number of decimal places of every money amount in v4.4
// (DecimalDineroType: 13 integer and 5 fraction digits). Computed amounts are
// rounded to it, half away from zero.
const MoneyPlaces = 5

// maxParseDigits bounds the digits an input number may carry, and
// maxParseExponent its exponent, so that a hostile input such as 1e999999999
// can never make a later operation allocate a huge integer.
const (
	maxParseDigits   = 40
	maxParseExponent = 40
)

// Amount is an exact decimal (money, quantity, rate, percentage) that also
// records whether it was given at all.
//
// The zero Amount is "absent": an optional XML element that is not written,
// a JSON field that was missing or null. A present zero is a different value
// ([AmountFromInt](0)). Amounts never go through float64: JSON input is read
// from the literal's bytes (a number, or a string holding a decimal), and
// output is a JSON number with at most 5 decimals, without exponent.
//
// Amount is a small value type; copy it freely.
type Amount struct {
	d       decimal.Decimal
	ok      bool
	invalid bool // given, but not a number (JSON input only)
}

// NewAmount returns a present Amount holding d.
func NewAmount(d decimal.Decimal) Amount { return Amount{d: d, ok: true} }

// AmountFromInt returns a present Amount holding the integer i.
func AmountFromInt(i int64) Amount { return Amount{d: decimal.New(i, 0), ok: true} }

// ParseAmount parses a plain decimal as written in XML or in a JSON string:
// an optional sign, digits, an optional fraction ("12", "-0.5", "1200.00000",
// ".5"). Exponents, thousands separators, spaces, NaN and Inf are refused.
func ParseAmount(s string) (Amount, error) {
	if err := checkDecimalSyntax(s, false); err != nil {
		return Amount{}, err
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.Abs().Cmp(maxMagnitude) >= 0 {
		return Amount{}, fmt.Errorf("invalid decimal %q", truncateForError(s))
	}
	return Amount{d: d, ok: true}, nil
}

// MustAmount is ParseAmount for constants known to be valid (tests,
// generators). It panics on a malformed value.
func MustAmount(s string) Amount {
	a, err := ParseAmount(s)
	if err != nil {
		panic(err)
	}
	return a
}

// IsSet reports whether the amount was given (is present). An invalid
// amount (see [Amount.Invalid]) is present.
func (a Amount) IsSet() bool { return a.ok }

// Invalid reports whether the JSON input held something that is not a
// decimal ("abc", true, {}, an out-of-range exponent). Decoding never fails
// on an amount, so that a request's every bad field can be reported at
// once; validation reports invalid amounts by their path. An invalid
// amount is present with the value 0.
func (a Amount) Invalid() bool { return a.invalid }

// IsZero reports whether a is the zero Amount, that is absent. It follows
// time.Time.IsZero and is what encoding/json's omitzero option consults, so
// that `json:",omitzero"` omits absent amounts but keeps a present 0. It is
// NOT a numeric test: use [Amount.Sign] or [Amount.IsZeroValue] for that.
func (a Amount) IsZero() bool { return !a.ok }

// IsZeroValue reports whether the amount is numerically zero (an absent
// amount counts as zero).
func (a Amount) IsZeroValue() bool { return a.d.Sign() == 0 }

// Decimal returns the value; an absent amount yields decimal zero.
func (a Amount) Decimal() decimal.Decimal { return a.d }

// Or returns a when present, otherwise def.
func (a Amount) Or(def Amount) Amount {
	if a.ok {
		return a
	}
	return def
}

// Sign returns -1, 0 or +1 (0 for an absent amount).
func (a Amount) Sign() int { return a.d.Sign() }

// Cmp compares the values of a and b (absent counts as zero).
func (a Amount) Cmp(b Amount) int { return a.d.Cmp(b.d) }

// Equal reports whether a and b are both absent, or both present with the
// same numeric value (1.5 equals 1.50000).
func (a Amount) Equal(b Amount) bool {
	if a.ok != b.ok || a.invalid != b.invalid {
		return false
	}
	return a.d.Cmp(b.d) == 0
}

// Places returns the number of fraction digits the value carries as written
// (trailing zeros included: "1.500" has 3). Validation compares it with the
// schema's fractionDigits.
func (a Amount) Places() int32 {
	if e := a.d.Exponent(); e < 0 {
		return -e
	}
	return 0
}

// SignificantPlaces returns the fraction digits once trailing zeros are
// dropped ("1.500" has 1). The schema's fractionDigits facet counts these.
func (a Amount) SignificantPlaces() int32 {
	if a.Places() == 0 {
		return 0
	}
	s := a.d.String() // trims trailing fraction zeros, never uses an exponent
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return int32(len(s) - i - 1)
	}
	return 0
}

// IntegerDigits returns the number of digits before the decimal point
// (0 for values below 1).
func (a Amount) IntegerDigits() int {
	ip := a.d.Truncate(0).Abs()
	if ip.Sign() == 0 {
		return 0
	}
	return len(ip.String())
}

// String formats the value rounded to 5 decimals (half away from zero),
// without exponent and without trailing fraction zeros ("1200", "438.9255").
// An absent amount formats as "".
func (a Amount) String() string {
	if !a.ok {
		return ""
	}
	return a.d.Round(MoneyPlaces).String()
}

// Fixed formats the value with exactly places decimals (rounded half away
// from zero), without exponent. An absent amount formats as "".
func (a Amount) Fixed(places int32) string {
	if !a.ok {
		return ""
	}
	return a.d.StringFixed(places)
}

// MarshalJSON writes a JSON number with at most 5 decimals (no exponent, no
// quotes), or null when the amount is absent.
func (a Amount) MarshalJSON() ([]byte, error) {
	if !a.ok || a.invalid {
		return []byte("null"), nil
	}
	return []byte(a.String()), nil
}

// UnmarshalJSON accepts a JSON number, a string holding a decimal, or null
// (absent). An empty string is absent too. The literal is parsed exactly,
// never through float64; exponents are accepted ("1.5e2") within sane
// bounds. Anything else yields an [Amount.Invalid] amount rather than an
// error, so that decoding goes on and validation reports the field by its
// path.
func (a *Amount) UnmarshalJSON(b []byte) error {
	*a = parseJSONAmount(b)
	return nil
}

func parseJSONAmount(b []byte) Amount {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return Amount{}
	}
	bad := Amount{ok: true, invalid: true}
	var s string
	if b[0] == '"' {
		u, err := strconv.Unquote(string(b))
		if err != nil {
			return bad
		}
		u = trimASCIISpace(u)
		if u == "" {
			return Amount{}
		}
		s = u
	} else {
		s = string(b)
	}
	if checkDecimalSyntax(s, true) != nil {
		return bad
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.Abs().Cmp(maxMagnitude) >= 0 {
		return bad
	}
	return Amount{d: d, ok: true}
}

// maxMagnitude bounds accepted values far above any schema maximum
// (13 integer digits), so that every accepted value formats back into a
// number that parses again.
var maxMagnitude = decimal.New(1, 30)

// checkDecimalSyntax accepts [+-]? digits [. digits] with at least one digit,
// and, when allowExp is set, an exponent [eE][+-]?digits. It bounds the
// number of digits and the exponent.
func checkDecimalSyntax(s string, allowExp bool) error {
	bad := func() error { return fmt.Errorf("invalid decimal %q", truncateForError(s)) }
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		frac := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			frac++
		}
		if frac == 0 && digits == 0 {
			return bad()
		}
		digits += frac
	}
	if digits == 0 {
		return bad()
	}
	if digits > maxParseDigits {
		return fmt.Errorf("decimal %q has too many digits", truncateForError(s))
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		if !allowExp {
			return bad()
		}
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			exp = exp*10 + int(s[i]-'0')
			if exp > maxParseExponent {
				return fmt.Errorf("decimal %q is out of range", truncateForError(s))
			}
			i++
			n++
		}
		if n == 0 {
			return bad()
		}
	}
	if i != len(s) {
		return bad()
	}
	return nil
}

func trimASCIISpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

func truncateForError(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
