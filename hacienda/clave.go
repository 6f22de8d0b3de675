package hacienda

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"facturad/hacienda/msg"
)

// CostaRica is Costa Rica's time zone: the one every date of a v4.4
// document is written in, and the one the whole service reads and shows
// local times in. It is UTC−06:00 all year (Costa Rica has no daylight
// saving time), a fixed zone rather than the tz database's
// America/Costa_Rica, so that the result never depends on the host. It is
// the service's one declaration of it: every package uses it, under this
// name.
var CostaRica = time.FixedZone("-06:00", -6*60*60)

// Lengths of the numbering fields (Anexo 1, nota 3 and 4.1).
const (
	ConsecutivoLen = 20 // NumeroConsecutivo
	ClaveLen       = 50 // Clave

	// MaxConsecutivoNumber is the largest sequence number of a consecutivo
	// (10 digits); the sequence may restart at 1 after it.
	MaxConsecutivoNumber int64 = 9_999_999_999
)

// Situación values (clave digit 42).
const (
	SituacionNormal       = "1" // normal issue
	SituacionContingencia = "2" // replaces a contingency paper document
	SituacionSinInternet  = "3" // issued without internet, sent later
)

// ErrInvalidClave is wrapped by every error of ParseClave and
// ParseConsecutivo, so callers can tell a malformed number from other errors.
var ErrInvalidClave = errors.New("invalid clave or consecutivo")

// ClaveError is a malformed clave or consecutivo: what is wrong with it,
// in the catalogue's words. It matches ErrInvalidClave.
type ClaveError struct {
	Problem msg.Message
}

func claveError(m msg.Message) error { return &ClaveError{Problem: m} }

func (e *ClaveError) Error() string { return ErrInvalidClave.Error() + ": " + e.Problem.String() }

// Is makes errors.Is(err, ErrInvalidClave) hold.
func (e *ClaveError) Is(target error) bool { return target == ErrInvalidClave }

// Describe is what is wrong with the clave.
func (e *ClaveError) Describe() msg.Message { return e.Problem }

// claveProblem is what err (from this file) says is wrong with a clave.
func claveProblem(err error) msg.Message {
	var ce *ClaveError
	if errors.As(err, &ce) {
		return ce.Problem
	}
	return msg.ClaveLength.With(ClaveLen)
}

// Consecutivo is the 20-digit NumeroConsecutivo of a document: the branch
// (establishment, 3 digits, 001 = head office), the terminal or point of sale
// (5 digits), the document type (2 digits, 01…10) and the sequence number
// (10 digits, 1…9999999999).
type Consecutivo struct {
	Branch   string // 3 digits
	Terminal string // 5 digits
	DocType  string // 2 digits: 01 FE … 10 REP (05–07 for receptor messages)
	Number   int64  // 1 … MaxConsecutivoNumber
}

// NewConsecutivo checks its parts and returns the consecutivo they form.
// branch and terminal must be exactly 3 and 5 digits (leading zeros
// included), docType one of the consecutivo document-type codes.
func NewConsecutivo(branch, terminal, docType string, number int64) (Consecutivo, error) {
	c := Consecutivo{Branch: branch, Terminal: terminal, DocType: docType, Number: number}
	if err := c.validate(); err != nil {
		return Consecutivo{}, err
	}
	return c, nil
}

func (c Consecutivo) validate() error {
	switch {
	case !isNDigits(c.Branch, 3):
		return claveError(msg.ClaveBranch.With(c.Branch))
	case !isNDigits(c.Terminal, 5):
		return claveError(msg.ClaveTerminal.With(c.Terminal))
	case !isConsecutivoType(c.DocType):
		return claveError(msg.ClaveDocumentType.With(c.DocType))
	case c.Number < 1 || c.Number > MaxConsecutivoNumber:
		return claveError(msg.ClaveSequence.With(c.Number, MaxConsecutivoNumber))
	}
	return nil
}

// String returns the 20 digits of the consecutivo.
func (c Consecutivo) String() string {
	var b [ConsecutivoLen]byte
	return string(c.appendTo(b[:0]))
}

func (c Consecutivo) appendTo(b []byte) []byte {
	b = append(b, c.Branch...)
	b = append(b, c.Terminal...)
	b = append(b, c.DocType...)
	return appendPadded(b, c.Number, 10)
}

// IsZero reports whether c is the zero Consecutivo.
func (c Consecutivo) IsZero() bool { return c == Consecutivo{} }

// ParseConsecutivo reads a 20-digit NumeroConsecutivo.
func ParseConsecutivo(s string) (Consecutivo, error) {
	if !isNDigits(s, ConsecutivoLen) {
		return Consecutivo{}, claveError(msg.ConsecutivoDigits.With(ConsecutivoLen))
	}
	n, _ := strconv.ParseInt(s[10:], 10, 64) // 10 digits always fit
	c := Consecutivo{Branch: s[0:3], Terminal: s[3:8], DocType: s[8:10], Number: n}
	if err := c.validate(); err != nil {
		return Consecutivo{}, err
	}
	return c, nil
}

// Clave is the 50-digit key of a document: 506, the day, month and 2-digit
// year of issue in Costa Rica time, the issuer's identification number padded
// with zeros to 12 digits, the consecutivo, the situación and an 8-digit
// security code.
type Clave struct {
	// Date is the day of issue: midnight, Costa Rica time (UTC−06:00).
	// Only the day, month and the last two digits of the year are written
	// into the clave; ParseClave reads the year as 20yy.
	Date         time.Time
	IssuerID     string // 12 digits, zero-padded on the left
	Consecutivo  Consecutivo
	Situacion    string // SituacionNormal, SituacionContingencia or SituacionSinInternet
	SecurityCode string // 8 digits
}

// NewClave builds the clave of a document issued at the instant issued (its
// date is taken in Costa Rica time, whatever the location of issued) by the
// taxpayer issuerID (digits only, up to 12; it is padded with zeros), numbered
// c, with situación situacion ("1", "2" or "3"). The 8-digit security code
// is drawn uniformly from rnd; a nil rnd means crypto/rand.Reader.
func NewClave(issued time.Time, issuerID string, c Consecutivo, situacion string, rnd io.Reader) (Clave, error) {
	if issued.IsZero() {
		return Clave{}, claveError(msg.ClaveIssueTime.With())
	}
	id, err := padIssuerID(issuerID)
	if err != nil {
		return Clave{}, err
	}
	if err := c.validate(); err != nil {
		return Clave{}, err
	}
	if !isClaveSituacion(situacion) {
		return Clave{}, claveError(msg.ClaveSituacion.With(situacion))
	}
	y := issued.In(CostaRica).Year()
	if y < 2000 || y > 2099 {
		return Clave{}, claveError(msg.ClaveYear.With(y))
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	code, err := securityCode(rnd)
	if err != nil {
		return Clave{}, fmt.Errorf("draw clave security code: %w", err)
	}
	return Clave{
		Date:         dayOf(issued),
		IssuerID:     id,
		Consecutivo:  c,
		Situacion:    situacion,
		SecurityCode: code,
	}, nil
}

// String returns the 50 digits of the clave.
func (k Clave) String() string {
	var b [ClaveLen]byte
	out := append(b[:0], "506"...)
	out = appendPadded(out, int64(k.Date.Day()), 2)
	out = appendPadded(out, int64(k.Date.Month()), 2)
	out = appendPadded(out, int64(k.Date.Year()%100), 2)
	out = append(out, k.IssuerID...)
	out = k.Consecutivo.appendTo(out)
	out = append(out, k.Situacion...)
	out = append(out, k.SecurityCode...)
	return string(out)
}

// IsZero reports whether k is the zero Clave.
func (k Clave) IsZero() bool { return k == Clave{} }

// ParseClave reads a 50-digit clave and checks its structure: country code
// 506, a real calendar date, a valid consecutivo, situación 1 to 3. It does
// not say whether the clave belongs to a given issuer: see Clave.Check.
func ParseClave(s string) (Clave, error) {
	if !isNDigits(s, ClaveLen) {
		return Clave{}, claveError(msg.ClaveLength.With(ClaveLen))
	}
	if s[0:3] != "506" {
		return Clave{}, claveError(msg.ClaveCountry.With())
	}
	day, _ := strconv.Atoi(s[3:5])
	month, _ := strconv.Atoi(s[5:7])
	yy, _ := strconv.Atoi(s[7:9])
	date := time.Date(2000+yy, time.Month(month), day, 0, 0, 0, 0, CostaRica)
	if month < 1 || month > 12 || day < 1 || date.Day() != day || int(date.Month()) != month {
		return Clave{}, claveError(msg.ClaveDate.With(s[3:5], s[5:7], s[7:9]))
	}
	c, err := ParseConsecutivo(s[21:41])
	if err != nil {
		return Clave{}, err
	}
	if !isClaveSituacion(s[41:42]) {
		return Clave{}, claveError(msg.ClaveSituacionPart.With(s[41:42]))
	}
	return Clave{
		Date:         date,
		IssuerID:     s[9:21],
		Consecutivo:  c,
		Situacion:    s[41:42],
		SecurityCode: s[42:50],
	}, nil
}

// ClaveExpectation is what a client-supplied clave must agree with. Empty
// fields (zero Issued) are not checked.
type ClaveExpectation struct {
	IssuerID  string    // the issuer's identification number, unpadded or padded
	Branch    string    // 3 digits
	Terminal  string    // 5 digits
	DocType   string    // 2 digits
	Situacion string    // "1", "2" or "3"
	Issued    time.Time // FechaEmision: the clave must carry its Costa Rica date
}

// Check compares k with what the document it numbers says. It returns one
// message per disagreement, none when k fits; the caller reports them on the
// request's clave field.
func (k Clave) Check(want ClaveExpectation) []msg.Message {
	var msgs []msg.Message
	if want.IssuerID != "" {
		if id, err := padIssuerID(want.IssuerID); err != nil || id != k.IssuerID {
			msgs = append(msgs, msg.ClaveIssuerDiffers.With(k.IssuerID, want.IssuerID))
		}
	}
	if want.Branch != "" && want.Branch != k.Consecutivo.Branch {
		msgs = append(msgs, msg.ClaveBranchDiffers.With(k.Consecutivo.Branch, want.Branch))
	}
	if want.Terminal != "" && want.Terminal != k.Consecutivo.Terminal {
		msgs = append(msgs, msg.ClaveTerminalDiffers.With(k.Consecutivo.Terminal, want.Terminal))
	}
	if want.DocType != "" && want.DocType != k.Consecutivo.DocType {
		msgs = append(msgs, msg.ClaveTypeDiffers.With(k.Consecutivo.DocType, want.DocType))
	}
	if want.Situacion != "" && want.Situacion != k.Situacion {
		msgs = append(msgs, msg.ClaveSituacionDiffers.With(k.Situacion, want.Situacion))
	}
	if !want.Issued.IsZero() {
		d := dayOf(want.Issued)
		if d.Day() != k.Date.Day() || d.Month() != k.Date.Month() || d.Year()%100 != k.Date.Year()%100 {
			msgs = append(msgs, msg.ClaveDateDiffers.With(k.Date.Format("02/01/06"), d.Format("02/01/06")))
		}
	}
	return msgs
}

// CheckClave reads a client-supplied clave and checks it against the
// document it must number. Every problem is reported on the request field
// "clave" of a *ValidationError (a malformed clave gives one message); the
// error is nil when the clave fits.
func CheckClave(s string, want ClaveExpectation) (Clave, error) {
	k, err := ParseClave(s)
	if err != nil {
		return Clave{}, &ValidationError{Message: DefaultValidationMessage, Fields: msg.One("clave", claveProblem(err))}
	}
	if msgs := k.Check(want); len(msgs) > 0 {
		return k, &ValidationError{Message: DefaultValidationMessage, Fields: map[string][]msg.Message{"clave": msgs}}
	}
	return k, nil
}

// Numbering says where a document is numbered, and with what
// (NumberDocument).
type Numbering struct {
	Branch    string // 3 digits
	Terminal  string // 5 digits
	Situacion string // SituacionNormal, SituacionContingencia or SituacionSinInternet
	// Number is the sequence number the service hands out (1 to
	// MaxConsecutivoNumber).
	Number int64
	// Clave is a clave the caller supplied, or "". When given it numbers
	// the document instead of Number.
	Clave string
	// Rand is the source of the clave's security code; nil means
	// crypto/rand.
	Rand io.Reader
}

// NumberDocument gives doc its NumeroConsecutivo and Clave and returns the
// clave. Without n.Clave it builds them: the consecutivo of n.Branch,
// n.Terminal, doc.Type and n.Number, and a clave dated from
// doc.FechaEmision (which must be set) for the company issuing the
// document (doc.Issuer(): the XML Receptor of a purchase invoice, the
// Emisor otherwise), with situación n.Situacion and a security code from
// n.Rand. With n.Clave, the caller's clave is kept, with its own
// consecutivo, once CheckClave finds it agrees with that issuer, n.Branch,
// n.Terminal, doc.Type, n.Situacion and the date of doc.FechaEmision;
// n.Number is not used, and what disagrees is a *ValidationError on the
// request field "clave". Either way it replaces whatever numbering doc
// had; on error doc is unchanged.
func NumberDocument(doc *Document, n Numbering) (Clave, error) {
	if doc.FechaEmision.IsZero() {
		return Clave{}, fmt.Errorf("number document: FechaEmision is not set")
	}
	var k Clave
	if n.Clave != "" {
		var err error
		k, err = CheckClave(n.Clave, ClaveExpectation{
			IssuerID:  doc.Issuer().Numero,
			Branch:    n.Branch,
			Terminal:  n.Terminal,
			DocType:   string(doc.Type),
			Situacion: n.Situacion,
			Issued:    doc.FechaEmision,
		})
		if err != nil {
			return Clave{}, err
		}
	} else {
		c, err := NewConsecutivo(n.Branch, n.Terminal, string(doc.Type), n.Number)
		if err != nil {
			return Clave{}, fmt.Errorf("number document: %w", err)
		}
		k, err = NewClave(doc.FechaEmision, doc.Issuer().Numero, c, n.Situacion, n.Rand)
		if err != nil {
			return Clave{}, fmt.Errorf("number document: %w", err)
		}
	}
	doc.NumeroConsecutivo = k.Consecutivo.String()
	doc.Clave = k.String()
	return k, nil
}

// CheckNumbering checks that a document's numbering agrees with itself, as
// the tax authority does on reception: NumeroConsecutivo and Clave are well
// formed, the consecutivo's document type is the document's type, the clave
// embeds that consecutivo, carries the Costa Rica date of FechaEmision and
// the id of the company issuing the document (doc.Issuer()). It returns one
// message per disagreement, none when everything fits.
func CheckNumbering(doc *Document) []string {
	var msgs []string
	c, err := ParseConsecutivo(doc.NumeroConsecutivo)
	if err != nil {
		msgs = append(msgs, "NumeroConsecutivo: "+claveProblem(err).String())
	} else if c.DocType != string(doc.Type) {
		msgs = append(msgs, fmt.Sprintf("NumeroConsecutivo: document type %s is not the document's type %s", c.DocType, doc.Type))
	}
	k, err := ParseClave(doc.Clave)
	if err != nil {
		return append(msgs, "Clave: "+claveProblem(err).String())
	}
	if k.Consecutivo.String() != doc.NumeroConsecutivo {
		msgs = append(msgs, fmt.Sprintf("Clave: its consecutivo %s is not NumeroConsecutivo %s", k.Consecutivo, doc.NumeroConsecutivo))
	}
	for _, m := range k.Check(ClaveExpectation{IssuerID: doc.Issuer().Numero, Issued: doc.FechaEmision}) {
		msgs = append(msgs, "Clave: "+m.String())
	}
	return msgs
}

// dayOf returns midnight, Costa Rica time, of the day t falls on there.
func dayOf(t time.Time) time.Time {
	y, m, d := t.In(CostaRica).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, CostaRica)
}

// padIssuerID left-pads a numeric identification to the 12 digits of the
// clave (nota 4.1).
func padIssuerID(id string) (string, error) {
	if id == "" || len(id) > 12 || !isNDigits(id, len(id)) {
		return "", claveError(msg.ClaveIssuerID.With(id))
	}
	return strings.Repeat("0", 12-len(id)) + id, nil
}

// securityCode draws 8 decimal digits uniformly: 32-bit values at or above
// 4.2e9 (the largest multiple of 1e8 below 2^32) are rejected and redrawn.
func securityCode(rnd io.Reader) (string, error) {
	const limit = 42 * 100_000_000
	var b [4]byte
	for range 64 {
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return "", err
		}
		v := binary.BigEndian.Uint32(b[:])
		if v < limit {
			return string(appendPadded(nil, int64(v%100_000_000), 8)), nil
		}
	}
	return "", errors.New("random source keeps returning values out of range")
}

func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func isNDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isClaveSituacion(s string) bool {
	return s == SituacionNormal || s == SituacionContingencia || s == SituacionSinInternet
}
