package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"facturad/hacienda"
)

// FuzzRegistryQueries asks every registry endpoint arbitrary parameters:
// each answer is a 200, 400 or 404 in JSON, and what the parsers accept
// keeps their rules.
func FuzzRegistryQueries(f *testing.F) {
	for _, s := range []string{"114440555", "012345678", "3101230000", "3101239999", "AL-00012345-24", "al-00460853-20",
		"2392000000000", "1234567890999", "ferretería", "2026-01-01", "1999-12-31", "2026-13-01", "", "０１２", "é"} {
		f.Add(s, s)
	}
	f.Add("2026-01-02", "2026-01-01")
	f.Add("2025-01-01", "2026-01-01")
	s, err := New(Options{Clock: NewManualClock(time.Date(2026, 11, 21, 12, 0, 0, 0, hacienda.CostaRica))})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, a, b string) {
		if tipo := idType(a); tipo != "" && (!allDigits(a) || a[0] == '0' || len(a) < 9 || len(a) > 12) {
			t.Fatalf("idType(%q) = %q", a, tipo)
		}
		if from, to, err := historyRange(a, b); err == nil && (to.Before(from) || to.Sub(from) >= maxHistoryDays*24*time.Hour) {
			t.Fatalf("historyRange(%q, %q) = %v %v", a, b, from, to)
		}
		for _, c := range searchCabys(a) {
			// Words are runs of letters and digits.
			words := strings.FieldsFunc(fold(a), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			for _, w := range words {
				if !strings.Contains(fold(c.Descripcion)+" "+c.Codigo, w) {
					t.Fatalf("search %q found %s without %q", a, c.Codigo, w)
				}
			}
		}
		if e, found, malformed := lookupExoneration(a); found && (malformed || e.NumeroDocumento != strings.ToUpper(a)) {
			t.Fatalf("lookupExoneration(%q) = %+v", a, e)
		}
		for _, path := range []string{
			"/fe/ae?identificacion=" + url.QueryEscape(a),
			"/fe/cabys?codigo=" + url.QueryEscape(a),
			"/fe/cabys?q=" + url.QueryEscape(a) + "&top=" + url.QueryEscape(b),
			"/fe/ex?autorizacion=" + url.QueryEscape(a),
			"/indicadores/tc/dolar/historico?d=" + url.QueryEscape(a) + "&h=" + url.QueryEscape(b),
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if c := rec.Code; c != 200 && c != 400 && c != 404 {
				t.Fatalf("%s: %d", path, c)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s: not JSON: %s", path, rec.Body)
			}
		}
	})
}

// TestDollarRate keeps the rates' rules over years of days: two decimals,
// the sale above the purchase, around ₡500, smooth from one day to the
// next.
func TestDollarRate(t *testing.T) {
	prev := 0.0
	for d := firstRateDay; d.Year() < 2040; d = d.AddDate(0, 0, 1) {
		compra, venta, ok := dollarRate(d.Format(time.DateOnly))
		if !ok || venta <= compra || venta < 470 || venta > 530 || decimals(venta) > 2 || decimals(compra) > 2 {
			t.Fatalf("%s: %v %v %v", d.Format(time.DateOnly), compra, venta, ok)
		}
		if prev != 0 && (venta-prev > 2 || prev-venta > 2) {
			t.Fatalf("%s: %v after %v", d.Format(time.DateOnly), venta, prev)
		}
		prev = venta
	}
	if _, _, ok := dollarRate("1999-12-31"); ok {
		t.Error("a rate before the first day")
	}
}

// decimals is how many decimals JSON writes v with.
func decimals(v float64) int {
	b, _ := json.Marshal(v)
	if _, frac, ok := strings.Cut(string(b), "."); ok {
		return len(frac)
	}
	return 0
}
