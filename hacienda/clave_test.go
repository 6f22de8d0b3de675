package hacienda

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewConsecutivo(t *testing.T) {
	tests := []struct {
		name     string
		branch   string
		terminal string
		docType  string
		number   int64
		want     string
	}{
		{name: "ok/head office", branch: "001", terminal: "00001", docType: "01", number: 123, want: "00100001010000000123"},
		{name: "ok/max number", branch: "999", terminal: "99999", docType: "10", number: MaxConsecutivoNumber, want: "99999999109999999999"},
		{name: "ok/receptor message", branch: "002", terminal: "00010", docType: "05", number: 1, want: "00200010050000000001"},
		{name: "error/short branch", branch: "01", terminal: "00001", docType: "01", number: 1},
		{name: "error/letters in terminal", branch: "001", terminal: "0000A", docType: "01", number: 1},
		{name: "error/unknown type", branch: "001", terminal: "00001", docType: "11", number: 1},
		{name: "error/type 00", branch: "001", terminal: "00001", docType: "00", number: 1},
		{name: "error/number zero", branch: "001", terminal: "00001", docType: "01", number: 0},
		{name: "error/number too big", branch: "001", terminal: "00001", docType: "01", number: MaxConsecutivoNumber + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewConsecutivo(tt.branch, tt.terminal, tt.docType, tt.number)
			if strings.HasPrefix(tt.name, "error/") {
				if !errors.Is(err, ErrInvalidClave) {
					t.Fatalf("err = %v, want ErrInvalidClave", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tt.want {
				t.Fatalf("String() = %s, want %s", got, tt.want)
			}
			back, err := ParseConsecutivo(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if back != c {
				t.Fatalf("ParseConsecutivo = %+v, want %+v", back, c)
			}
		})
	}
}

// fixedDigits is a random source that yields the given bytes, then zeros.
type fixedDigits struct{ b []byte }

func (f *fixedDigits) Read(p []byte) (int, error) {
	n := copy(p, f.b)
	f.b = f.b[n:]
	for i := n; i < len(p); i++ {
		p[i] = 0
	}
	return len(p), nil
}

func TestNewClave(t *testing.T) {
	cons := Consecutivo{Branch: "001", Terminal: "00001", DocType: "01", Number: 123}
	// 12345678 = 0x00BC614E
	code := []byte{0x00, 0xBC, 0x61, 0x4E}
	tests := []struct {
		name      string
		issued    time.Time
		issuerID  string
		situacion string
		rnd       []byte
		want      string
	}{
		{
			name:   "ok/spec example",
			issued: time.Date(2025, 9, 15, 10, 0, 0, 0, CostaRica), issuerID: "3101123456", situacion: "1", rnd: code,
			want: "50615092500310112345600100001010000000123112345678",
		},
		{
			name:   "ok/utc evening is still the same day in Costa Rica",
			issued: time.Date(2025, 9, 16, 5, 59, 59, 0, time.UTC), issuerID: "3101123456", situacion: "1", rnd: code,
			want: "50615092500310112345600100001010000000123112345678",
		},
		{
			name:   "ok/cedula fisica padded, contingency",
			issued: time.Date(2026, 1, 2, 8, 0, 0, 0, CostaRica), issuerID: "112340567", situacion: "2", rnd: code,
			want: "50602012600011234056700100001010000000123212345678",
		},
		{
			name:   "ok/rejection sampling skips values above the limit",
			issued: time.Date(2026, 1, 2, 8, 0, 0, 0, CostaRica), issuerID: "112340567", situacion: "3",
			rnd:  append([]byte{0xFF, 0xFF, 0xFF, 0xFF}, code...),
			want: "50602012600011234056700100001010000000123312345678",
		},
		{name: "error/issuer id with dash", issued: time.Now(), issuerID: "3-101-123456", situacion: "1"},
		{name: "error/issuer id too long", issued: time.Now(), issuerID: "1234567890123", situacion: "1"},
		{name: "error/situacion", issued: time.Now(), issuerID: "3101123456", situacion: "4"},
		{name: "error/no date", issuerID: "3101123456", situacion: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := NewClave(tt.issued, tt.issuerID, cons, tt.situacion, &fixedDigits{b: tt.rnd})
			if strings.HasPrefix(tt.name, "error/") {
				if !errors.Is(err, ErrInvalidClave) {
					t.Fatalf("err = %v, want ErrInvalidClave", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := k.String(); got != tt.want {
				t.Fatalf("String() = %s, want %s", got, tt.want)
			}
			back, err := ParseClave(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if back.String() != tt.want || !back.Date.Equal(k.Date) || back.Consecutivo != cons {
				t.Fatalf("ParseClave = %+v, want %+v", back, k)
			}
		})
	}
}

func TestNewClaveRandomSecurityCode(t *testing.T) {
	cons := Consecutivo{Branch: "001", Terminal: "00001", DocType: "04", Number: 9}
	seen := map[string]bool{}
	for range 50 {
		k, err := NewClave(time.Now(), "3101123456", cons, "1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !isNDigits(k.SecurityCode, 8) || len(k.String()) != ClaveLen {
			t.Fatalf("bad clave %q", k.String())
		}
		seen[k.SecurityCode] = true
	}
	if len(seen) < 45 {
		t.Fatalf("only %d distinct security codes out of 50", len(seen))
	}
}

func TestNewClaveReaderError(t *testing.T) {
	cons := Consecutivo{Branch: "001", Terminal: "00001", DocType: "04", Number: 9}
	_, err := NewClave(time.Now(), "3101123456", cons, "1", bytes.NewReader([]byte{1, 2}))
	if err == nil {
		t.Fatal("want an error from a short random source")
	}
}

func TestParseClave(t *testing.T) {
	const ok = "50615092500310112345600100001010000000123112345678"
	tests := []struct {
		name string
		in   string
	}{
		{name: "ok/spec example", in: ok},
		{name: "ok/leap day", in: "50629022400310112345600100001010000000123112345678"},
		{name: "error/empty", in: ""},
		{name: "error/49 digits", in: ok[:49]},
		{name: "error/51 digits", in: ok + "1"},
		{name: "error/letter", in: ok[:20] + "A" + ok[21:]},
		{name: "error/country", in: "507" + ok[3:]},
		{name: "error/day 32", in: "506" + "32" + ok[5:]},
		{name: "error/day 00", in: "506" + "00" + ok[5:]},
		{name: "error/month 13", in: "50615" + "13" + ok[7:]},
		{name: "error/not a leap year", in: "50629022500310112345600100001010000000123112345678"},
		{name: "error/document type 11", in: ok[:29] + "11" + ok[31:]},
		{name: "error/sequence zero", in: ok[:31] + "0000000000" + ok[41:]},
		{name: "error/situacion 0", in: ok[:41] + "0" + ok[42:]},
		{name: "error/situacion 4", in: ok[:41] + "4" + ok[42:]},
		{name: "error/unicode digits", in: "５" + ok[3:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseClave(tt.in)
			if strings.HasPrefix(tt.name, "error/") {
				if !errors.Is(err, ErrInvalidClave) {
					t.Fatalf("err = %v, want ErrInvalidClave", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.String() != tt.in {
				t.Fatalf("String() = %s, want %s", k.String(), tt.in)
			}
		})
	}
}

func TestClaveParts(t *testing.T) {
	k, err := ParseClave("50615092500310112345600100001010000000123112345678")
	if err != nil {
		t.Fatal(err)
	}
	want := Clave{
		Date:         time.Date(2025, 9, 15, 0, 0, 0, 0, CostaRica),
		IssuerID:     "003101123456",
		Consecutivo:  Consecutivo{Branch: "001", Terminal: "00001", DocType: "01", Number: 123},
		Situacion:    "1",
		SecurityCode: "12345678",
	}
	if !k.Date.Equal(want.Date) || k.IssuerID != want.IssuerID || k.Consecutivo != want.Consecutivo ||
		k.Situacion != want.Situacion || k.SecurityCode != want.SecurityCode {
		t.Fatalf("ParseClave = %+v, want %+v", k, want)
	}
}

func TestClaveCheck(t *testing.T) {
	k, err := ParseClave("50615092500310112345600100001010000000123112345678")
	if err != nil {
		t.Fatal(err)
	}
	match := ClaveExpectation{
		IssuerID: "3101123456", Branch: "001", Terminal: "00001", DocType: "01", Situacion: "1",
		Issued: time.Date(2025, 9, 15, 23, 59, 0, 0, CostaRica),
	}
	tests := []struct {
		name   string
		modify func(*ClaveExpectation)
		want   []string // substrings, one per expected message
	}{
		{name: "ok/everything matches", modify: func(*ClaveExpectation) {}},
		{name: "ok/padded issuer id", modify: func(e *ClaveExpectation) { e.IssuerID = "003101123456" }},
		{name: "ok/nothing to check", modify: func(e *ClaveExpectation) { *e = ClaveExpectation{} }},
		{name: "error/issuer", modify: func(e *ClaveExpectation) { e.IssuerID = "3101999999" }, want: []string{"issuer"}},
		{name: "error/issuer not numeric", modify: func(e *ClaveExpectation) { e.IssuerID = "ABC" }, want: []string{"issuer"}},
		{name: "error/branch", modify: func(e *ClaveExpectation) { e.Branch = "002" }, want: []string{"branch"}},
		{name: "error/terminal", modify: func(e *ClaveExpectation) { e.Terminal = "00002" }, want: []string{"terminal"}},
		{name: "error/type", modify: func(e *ClaveExpectation) { e.DocType = "04" }, want: []string{"document type"}},
		{name: "error/situacion", modify: func(e *ClaveExpectation) { e.Situacion = "3" }, want: []string{"situacion"}},
		{
			// Same day and month, another year: only the year tells them apart.
			name:   "error/year only",
			modify: func(e *ClaveExpectation) { e.Issued = time.Date(2026, 9, 15, 12, 0, 0, 0, CostaRica) },
			want:   []string{"date 15/09/25 is not the issue date 15/09/26"},
		},
		{
			name:   "error/date in utc is the next day",
			modify: func(e *ClaveExpectation) { e.Issued = time.Date(2025, 9, 16, 6, 0, 0, 0, time.UTC) },
			want:   []string{"date 15/09/25 is not the issue date 16/09/25"},
		},
		{
			name: "error/every field at once",
			modify: func(e *ClaveExpectation) {
				*e = ClaveExpectation{IssuerID: "1", Branch: "009", Terminal: "00009", DocType: "08", Situacion: "2", Issued: time.Date(2024, 1, 1, 0, 0, 0, 0, CostaRica)}
			},
			want: []string{"issuer", "branch", "terminal", "document type", "situacion", "date"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := match
			tt.modify(&e)
			got := k.Check(e)
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %q, want %d messages", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("message %d = %q, want it to mention %q", i, got[i], w)
				}
			}
		})
	}
}

func FuzzParseClave(f *testing.F) {
	f.Add("50615092500310112345600100001010000000123112345678")
	f.Add("50629022400310112345600100001010000000123112345678")
	f.Add("50600002500310112345600100001010000000000012345678")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseClave(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidClave) {
				t.Fatalf("error %v does not wrap ErrInvalidClave", err)
			}
			return
		}
		// A clave that parses prints back to the same 50 digits.
		if got := k.String(); got != s {
			t.Fatalf("ParseClave(%q).String() = %q", s, got)
		}
		if _, err := ParseConsecutivo(k.Consecutivo.String()); err != nil {
			t.Fatalf("consecutivo of a valid clave does not parse: %v", err)
		}
	})
}

func TestCheckClave(t *testing.T) {
	want := ClaveExpectation{IssuerID: "3101123456", Branch: "001", DocType: "01", Issued: time.Date(2025, 9, 15, 8, 0, 0, 0, CostaRica)}
	k, err := CheckClave("50615092500310112345600100001010000000123112345678", want)
	if err != nil || k.Consecutivo.Number != 123 {
		t.Fatalf("ok clave: %v %+v", err, k)
	}
	for name, tt := range map[string]struct {
		in    string
		count int
	}{
		"error/malformed":             {in: "5061509250031011234560010000101000000012311234567", count: 1},
		"error/wrong branch":          {in: "50615092500310112345600200001010000000123112345678", count: 1},
		"error/wrong issuer and type": {in: "50615092500310199999900100001040000000123112345678", count: 2},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := CheckClave(tt.in, want)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if len(ve.Fields) != 1 || len(ve.Fields["clave"]) != tt.count {
				t.Fatalf("fields = %v, want %d messages on clave", ve.Fields, tt.count)
			}
			if strings.Contains(ve.Fields["clave"][0].String(), "invalid clave or consecutivo") {
				t.Fatalf("message keeps the sentinel prefix: %q", ve.Fields["clave"][0])
			}
		})
	}
}

func TestNumberDocument(t *testing.T) {
	issued := time.Date(2026, 11, 21, 23, 30, 0, 0, CostaRica) // 05:30 UTC the next day
	fe := &Document{Type: TypeFE, FechaEmision: issued, Emisor: Party{Identificacion: Identificacion{Tipo: IDJuridica, Numero: "3101123456"}}}
	k, err := NumberDocument(fe, Numbering{Branch: "002", Terminal: "00003", Number: 77, Situacion: SituacionNormal, Rand: strings.NewReader("\x00\xbc\x61\x4e")})
	if err != nil {
		t.Fatal(err)
	}
	if fe.NumeroConsecutivo != "00200003010000000077" || fe.Clave != "50621112600310112345600200003010000000077112345678" || k.String() != fe.Clave {
		t.Fatalf("numbered FE: %s %s", fe.NumeroConsecutivo, fe.Clave)
	}
	// A purchase invoice carries the buyer's (the company's) id, which is
	// its XML Receptor.
	fec := &Document{Type: TypeFEC, FechaEmision: issued,
		Emisor:   Party{Identificacion: Identificacion{Tipo: IDExtranjeroNoDom, Numero: "IE9825613N"}},
		Receptor: &Party{Identificacion: Identificacion{Tipo: IDFisica, Numero: "109990999"}}}
	if _, err := NumberDocument(fec, Numbering{Branch: "001", Terminal: "00001", Number: 1, Situacion: SituacionSinInternet}); err != nil {
		t.Fatal(err)
	}
	k, err = CheckClave(fec.Clave, ClaveExpectation{IssuerID: "109990999", Branch: "001", DocType: "08", Situacion: "3", Issued: issued})
	if err != nil || k.Consecutivo.String() != fec.NumeroConsecutivo {
		t.Fatalf("numbered FEC: %v %s %s", err, fec.Clave, fec.NumeroConsecutivo)
	}
	for name, d := range map[string]*Document{
		"error/no date":        {Type: TypeFE, Emisor: fe.Emisor},
		"error/foreign issuer": {Type: TypeFE, FechaEmision: issued, Emisor: fec.Emisor},
		"error/unknown type":   {Type: "11", FechaEmision: issued, Emisor: fe.Emisor},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NumberDocument(d, Numbering{Branch: "001", Terminal: "00001", Number: 1, Situacion: "1"}); err == nil || d.Clave != "" || d.NumeroConsecutivo != "" {
				t.Fatalf("err = %v, clave %q", err, d.Clave)
			}
		})
	}
}

// A caller's clave numbers the document with its own consecutivo once it
// agrees with the issuer, branch, terminal, type, situación and date;
// anything else is a validation error on the field clave, one message per
// disagreement, and the document stays unnumbered.
func TestNumberDocumentCallersClave(t *testing.T) {
	issued := time.Date(2026, 11, 21, 23, 30, 0, 0, CostaRica)
	emisor := Party{Identificacion: Identificacion{Tipo: IDJuridica, Numero: "3101123456"}}
	at := Numbering{Branch: "002", Terminal: "00003", Situacion: SituacionNormal, Number: 5}
	const clave = "50621112600310112345600200003010000000077112345678"
	fe := &Document{Type: TypeFE, FechaEmision: issued, Emisor: emisor}
	n := at
	n.Clave = clave
	k, err := NumberDocument(fe, n)
	if err != nil {
		t.Fatal(err)
	}
	if fe.Clave != clave || fe.NumeroConsecutivo != "00200003010000000077" || k.Consecutivo.Number != 77 {
		t.Fatalf("caller's clave: %s %s number %d", fe.Clave, fe.NumeroConsecutivo, k.Consecutivo.Number)
	}
	tests := []struct {
		name  string
		edit  func(*Document, *Numbering)
		count int
	}{
		{"error/malformed", func(_ *Document, n *Numbering) { n.Clave = clave[:49] }, 1},
		{"error/not a calendar date", func(_ *Document, n *Numbering) { n.Clave = "50631022600310112345600200003010000000077112345678" }, 1},
		{"error/another issuer", func(d *Document, _ *Numbering) { d.Emisor.Identificacion.Numero = "3101999999" }, 1},
		{"error/another branch and terminal", func(_ *Document, n *Numbering) { n.Branch, n.Terminal = "001", "00001" }, 2},
		{"error/another type", func(d *Document, _ *Numbering) { d.Type = TypeTE }, 1},
		{"error/another situacion", func(_ *Document, n *Numbering) { n.Situacion = SituacionSinInternet }, 1},
		{"error/another day", func(d *Document, _ *Numbering) { d.FechaEmision = issued.Add(time.Hour) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Document{Type: TypeFE, FechaEmision: issued, Emisor: emisor}
			n := at
			n.Clave = clave
			tt.edit(d, &n)
			_, err := NumberDocument(d, n)
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Fields) != 1 || len(ve.Fields["clave"]) != tt.count {
				t.Fatalf("err = %v, want %d messages on clave", err, tt.count)
			}
			if strings.Contains(ve.Fields["clave"][0].String(), "invalid clave or consecutivo") {
				t.Errorf("message keeps the sentinel prefix: %q", ve.Fields["clave"][0])
			}
			if d.Clave != "" || d.NumeroConsecutivo != "" {
				t.Errorf("numbered anyway: %s %s", d.Clave, d.NumeroConsecutivo)
			}
		})
	}
}

func TestCheckNumbering(t *testing.T) {
	issued := time.Date(2026, 11, 21, 14, 3, 0, 0, CostaRica)
	good := func() *Document {
		d := &Document{Type: TypeTE, FechaEmision: issued, Emisor: Party{Identificacion: Identificacion{Tipo: IDJuridica, Numero: "3101123456"}}}
		if _, err := NumberDocument(d, Numbering{Branch: "001", Terminal: "00001", Number: 5, Situacion: "1"}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		name   string
		modify func(*Document)
		want   []string
	}{
		{name: "ok/numbered", modify: func(*Document) {}},
		{name: "error/type of the root", modify: func(d *Document) { d.Type = TypeFE }, want: []string{"NumeroConsecutivo: document type 04 is not the document's type 01"}},
		{name: "error/consecutivo not in clave", modify: func(d *Document) { d.NumeroConsecutivo = "00100001040000000006" }, want: []string{"Clave: its consecutivo"}},
		{name: "error/date", modify: func(d *Document) { d.FechaEmision = issued.AddDate(0, 0, 1) }, want: []string{"Clave: the clave's date"}},
		{name: "error/issuer", modify: func(d *Document) { d.Emisor.Identificacion.Numero = "3101999999" }, want: []string{"Clave: the clave's issuer"}},
		{name: "error/malformed", modify: func(d *Document) { d.Clave, d.NumeroConsecutivo = "1", "2" }, want: []string{"NumeroConsecutivo: consecutivo must be 20 digits", "Clave: clave must be 50 digits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := good()
			tt.modify(d)
			got := CheckNumbering(d)
			if len(got) != len(tt.want) {
				t.Fatalf("CheckNumbering = %q, want %d messages", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("message %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}
