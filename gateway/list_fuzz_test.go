package gateway

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// FuzzListQuery: any query of a listing is read or refused with a 400
// naming only the listing's parameters, never a panic; what is read is
// within the contract's bounds; a cursor the server did not make for that
// listing, company and filters is refused with the 400 on cursor; and a
// cursor it made opens to the very place it was made for, but no longer
// once any bit of it is changed, nor for the other listing, nor for
// another company.
func FuzzListQuery(f *testing.F) {
	cursors := listCursors{key: []byte("0123456789abcdef0123456789abcdef")}
	spec := listSpec{Kind: "documents", Tipos: documentTipos}
	made := cursors.make("documents", 7, tenant.ListQuery{Estado: tenant.StateAccepted},
		tenant.ListKey{At: time.Date(2026, 2, 3, 4, 5, 6, 123456000, time.UTC), ID: 4242})
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC).UnixMicro()
	// The queries of TestDocumentListing's table, and a few good ones.
	for _, q := range []string{
		"limit=0", "limit=501", "limit=diez", "limit=-1", "desde=ayer", "hasta=2026-13-01",
		"desde=2026-02-10T10:00:00&hasta=2026-02-10T09:00:00", "estado=06", "estado=Accepted",
		"tipo_documento=05", "receptor=abc", "receptor=1-0987-0654", "id_externo=" + strings.Repeat("x", 101),
		"estado=01&estado=02", "companiaId=abc", "companiaId=-3", "cursor=not-a-cursor",
		"limit=0&estado=9", "estado=01&receptor=100000001", "companiaId=7&estado=01&cursor=" + made,
		"companiaId=7&Estado=01&CURSOR=" + made + "&cursor=" + made, "desde=2026-02-10&hasta=2026-02-10&limit=500",
		"tipo_documento=01&id_externo=%C3%B1&companiaId=9223372036854775807", "cursor=%20" + made + "%0A",
		"hasta=9999-12-31", "desde=0000-12-31", "hasta=10000-01-01", "desde=0001-01-01&hasta=2028-02-29",
		"hasta=9999-12-31T23:59:59-12:00", "desde=2027-02-29",
	} {
		f.Add(q, at, int64(4242), uint16(0))
	}
	f.Fuzz(func(t *testing.T, raw string, atMicro, id int64, flip uint16) {
		q, _ := url.ParseQuery(raw) // what parsed so far, as the server reads it
		lq, err := parseListQuery(q, spec)
		if err != nil {
			requireBadRequest(t, raw, err, "")
			return
		}
		fl := lq.Filter
		switch {
		case fl.Limit < 1 || fl.Limit > tenant.MaxListLimit:
			t.Fatalf("%q: limit %d read", raw, fl.Limit)
		case fl.Estado != "" && fl.Estado.Humanized() == "":
			t.Fatalf("%q: estado %q read", raw, fl.Estado)
		case fl.Tipo != "" && !slices.Contains(documentTipos, fl.Tipo):
			t.Fatalf("%q: tipo %q read", raw, fl.Tipo)
		case fl.Receptor != "" && (len(fl.Receptor) < 9 || len(fl.Receptor) > 12 || !isDigits(fl.Receptor)):
			t.Fatalf("%q: receptor %q read", raw, fl.Receptor)
		case !fl.Desde.IsZero() && !fl.Hasta.IsZero() && fl.Hasta.Before(fl.Desde):
			t.Fatalf("%q: hasta before desde read", raw)
		case !fl.Desde.IsZero() && (fl.Desde.Year() < 1 || fl.Desde.Year() > 9999),
			!fl.Hasta.IsZero() && (fl.Hasta.Year() < 1 || fl.Hasta.Year() > 9999):
			t.Fatalf("%q: a year outside 0001-9999 read: %v, %v", raw, fl.Desde, fl.Hasta)
		case lq.CompaniaID < 0:
			t.Fatalf("%q: company %d read", raw, lq.CompaniaID)
		}
		company := lq.CompaniaID
		if company == 0 {
			company = 7
		}
		if lq.Cursor != "" {
			k, err := cursors.open("documents", company, fl, lq.Cursor)
			if err != nil {
				requireBadRequest(t, raw, err, api.ParamCursor)
			} else if !sameCursor(lq.Cursor, cursors.make("documents", company, fl, *k)) {
				t.Fatalf("%q: a cursor the server did not make opens to %+v", raw, *k)
			}
		}

		// A cursor the server makes for this query.
		if id <= 0 {
			return
		}
		place := tenant.ListKey{At: time.UnixMicro(atMicro).UTC(), ID: id}
		c := cursors.make("documents", company, fl, place)
		if strings.Trim(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			t.Fatalf("cursor %q needs escaping in a query", c)
		}
		k, err := cursors.open("documents", company, fl, c)
		if err != nil {
			t.Fatalf("%q: its own cursor %q refused: %v", raw, c, err)
		}
		if !k.At.Equal(place.At) || k.ID != place.ID {
			t.Fatalf("%q: the cursor of %+v opens to %+v", raw, place, *k)
		}
		b, _ := base64.RawURLEncoding.DecodeString(c)
		bit := int(flip) % (8 * len(b))
		b[bit/8] ^= 1 << (bit % 8)
		if _, err := cursors.open("documents", company, fl, base64.RawURLEncoding.EncodeToString(b)); err == nil {
			t.Fatalf("%q: the cursor %q with bit %d changed opens", raw, c, bit)
		} else {
			requireBadRequest(t, raw, err, api.ParamCursor)
		}
		if _, err := cursors.open("received", company, fl, c); err == nil {
			t.Fatalf("%q: a documents cursor opens the received listing", raw)
		}
		if _, err := cursors.open("documents", company+1, fl, c); err == nil {
			t.Fatalf("%q: a cursor of company %d opens for %d", raw, company, company+1)
		}
	})
}

// requireBadRequest fails unless err is a 400 in the contract's form that
// names only the listing's parameters (and field, if given).
func requireBadRequest(t *testing.T, raw string, err error, field string) {
	t.Helper()
	ae, ok := err.(*apiError)
	if !ok || ae.status != 400 || ae.msg.Entry() != msg.ValidationFailed || len(ae.fields) == 0 {
		t.Fatalf("%q: refusal not a 400 of the contract: %#v", raw, err)
	}
	params := []string{api.ParamDesde, api.ParamHasta, api.ParamEstado, api.ParamTipo, api.ParamIDExterno, api.ParamReceptor, api.ParamLimit, api.ParamCursor, api.ParamCompaniaID}
	for name, msgs := range ae.fields {
		if !slices.Contains(params, name) || len(msgs) == 0 {
			t.Fatalf("%q: refusal names %q: %v", raw, name, msgs)
		}
	}
	if field != "" && len(ae.fields[field]) == 0 {
		t.Fatalf("%q: refusal not on %s: %v", raw, field, ae.fields)
	}
}

// sameCursor reports whether two cursors hold the same bytes.
func sameCursor(a, b string) bool {
	x, err1 := base64.RawURLEncoding.DecodeString(a)
	y, err2 := base64.RawURLEncoding.DecodeString(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
