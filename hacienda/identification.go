package hacienda

import (
	"strings"

	"facturad/hacienda/msg"
)

// This file is the service's one rule for identifications (nota 4): which
// types there are, how each type's number is written, and when two numbers
// are the same taxpayer's. Every package checks and compares
// identifications with it.

// Identification types (nota 4).
const (
	IDFisica          = "01" // cédula física: 9 digits
	IDJuridica        = "02" // cédula jurídica: 10 digits
	IDDIMEX           = "03" // DIMEX: 11 or 12 digits
	IDNITE            = "04" // NITE: 10 digits
	IDExtranjeroNoDom = "05" // extranjero no domiciliado: up to 20 letters/digits
	IDNoContribuyente = "06" // no contribuyente: up to 20 letters/digits
)

// idRule is how the numbers of one identification type are written.
type idRule struct {
	// national types (01-04) are lo to hi digits; the foreign ones 1 to
	// 20 letters and digits.
	national bool
	lo, hi   int
	// noLeadingZero: the number never starts with 0.
	noLeadingZero bool
	// problem says what a number of the type must be.
	problem *msg.Entry
}

// idRules are nota 4 (spec §5.3, decision 28). No type takes dashes.
var idRules = map[string]idRule{
	IDFisica:          {lo: 9, hi: 9, national: true, noLeadingZero: true, problem: msg.IDFisica},
	IDJuridica:        {lo: 10, hi: 10, national: true, problem: msg.IDJuridica},
	IDDIMEX:           {lo: 11, hi: 12, national: true, noLeadingZero: true, problem: msg.IDDIMEX},
	IDNITE:            {lo: 10, hi: 10, national: true, problem: msg.IDNITE},
	IDExtranjeroNoDom: {problem: msg.IDForeign},
	IDNoContribuyente: {problem: msg.IDForeign},
}

// tiposIdentificacion is the code list of the identification types.
var tiposIdentificacion = func() codeSet {
	s := make(codeSet, len(idRules))
	for t := range idRules {
		s[t] = struct{}{}
	}
	return s
}()

// IsIDType reports whether tipo is one of the identification types of
// nota 4 (01 to 06).
func IsIDType(tipo string) bool { _, ok := idRules[tipo]; return ok }

// IsNationalID reports whether tipo is a Costa Rican identification type
// (01 física, 02 jurídica, 03 DIMEX, 04 NITE), whose numbers are digits;
// false for the foreign types 05 and 06 and unknown ones.
func IsNationalID(tipo string) bool { return idRules[tipo].national }

// NumberProblem says what is wrong with the identification's number for
// its type, or returns the zero Message when the number is written as
// nota 4 says: física 9 digits and DIMEX 11 or 12, neither starting with
// 0; jurídica and NITE 10 digits; the foreign types 05 and 06 1 to 20
// letters and digits.
// An unknown type is a problem too; callers that report the type on a
// field of its own check it first with IsIDType.
func (i Identificacion) NumberProblem() msg.Message {
	r, ok := idRules[i.Tipo]
	if !ok {
		return msg.IDTypeUnknown.With()
	}
	n := i.Numero
	ok = alnumRE.MatchString(n) // 1 to 20 letters and digits
	if r.national {
		ok = isDigits(n, r.lo, r.hi) && !(r.noLeadingZero && n[0] == '0')
	}
	if !ok {
		return r.problem.With()
	}
	return msg.Message{}
}

// UnpaddedNumber is an identification number without its left zero
// padding: the form in which numbers are the same (SameNumber). The clave
// pads the issuer's number to 12 digits, and the reception API's numbers
// are sent padded by some clients and answered padded.
func UnpaddedNumber(n string) string { return strings.TrimLeft(n, "0") }

// SameNumber reports whether two identification numbers are the same
// taxpayer's: equal once their left zero padding is removed. Nothing else
// is ignored: a dash or a space makes a number another (no type writes
// them), and letters are significant (the foreign types have them). Empty
// numbers are never the same.
func SameNumber(a, b string) bool {
	return a != "" && b != "" && UnpaddedNumber(a) == UnpaddedNumber(b)
}

// FitsReceptionAPI reports whether the reception API's JSON can carry the
// identification (spec §15.3, §17 item 18): its types are 01 to 06 and its
// numbers at most 12 characters, while the XML allows 20 letters and
// digits for foreign ids (types 05 and 06). It is the one rule both the
// engine (at input) and the submission builder follow (decision 49).
func (i Identificacion) FitsReceptionAPI() bool {
	return IsIDType(i.Tipo) && i.Numero != "" && len(i.Numero) <= 12 && alnumRE.MatchString(i.Numero)
}
