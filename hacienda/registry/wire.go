package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// This file reads the registry's answers as it writes them. Their shapes
// are the real service's (testdata/real holds answers it gave, with their
// sources); fields this package does not use are ignored.

// flexString reads a JSON string or number as text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string or a number: %w", err)
	}
	*f = flexString(n.String())
	return nil
}

// flexDecimal reads a JSON number or a numeric string as a decimal.
type flexDecimal struct{ d decimal.Decimal }

func (f *flexDecimal) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		f.d = decimal.Zero
		return nil
	}
	d, err := decimal.NewFromString(strings.ReplaceAll(string(s), ",", "."))
	if err != nil {
		return fmt.Errorf("not a number: %q", string(s))
	}
	f.d = d
	return nil
}

// flexTime reads the registry's dates: "2024-05-01T00:00:00", with or
// without a fraction or zone, "2024-05-01 00:00:00" or "2024-05-01". A
// date without a zone is Costa Rica's.
type flexTime struct{ t time.Time }

func (f *flexTime) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		f.t = time.Time{}
		return nil
	}
	t, err := parseDate(string(s))
	if err != nil {
		return err
	}
	f.t = t
	return nil
}

func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, hacienda.CostaRica); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date: %q", s)
}

// DecodeTaxpayer reads an answer of /fe/ae.
func DecodeTaxpayer(b []byte) (Taxpayer, error) {
	var w struct {
		Identificacion     flexString `json:"identificacion"`
		Nombre             string     `json:"nombre"`
		TipoIdentificacion flexString `json:"tipoIdentificacion"`
		Regimen            *struct {
			Codigo      flexString `json:"codigo"`
			Descripcion string     `json:"descripcion"`
		} `json:"regimen"`
		Situacion *struct {
			Estado  flexString `json:"estado"`
			Moroso  flexString `json:"moroso"`
			Omiso   flexString `json:"omiso"`
			Mensaje string     `json:"mensaje"`
		} `json:"situacion"`
		Actividades []struct {
			Estado      flexString `json:"estado"`
			Tipo        flexString `json:"tipo"`
			Codigo      flexString `json:"codigo"`
			Descripcion string     `json:"descripcion"`
		} `json:"actividades"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Taxpayer{}, fmt.Errorf("read a taxpayer: %w", err)
	}
	if strings.TrimSpace(w.Nombre) == "" && w.Actividades == nil {
		return Taxpayer{}, errors.New("read a taxpayer: the answer has neither a name nor activities")
	}
	t := Taxpayer{
		Identificacion:     string(w.Identificacion),
		Nombre:             strings.TrimSpace(w.Nombre),
		TipoIdentificacion: string(w.TipoIdentificacion),
		Actividades:        []Activity{},
	}
	if w.Regimen != nil {
		n, _ := strconv.Atoi(string(w.Regimen.Codigo))
		t.Regimen = Regimen{Codigo: n, Descripcion: strings.TrimSpace(w.Regimen.Descripcion)}
	}
	if w.Situacion != nil {
		t.Situacion = Situacion{Estado: string(w.Situacion.Estado), Moroso: string(w.Situacion.Moroso), Omiso: string(w.Situacion.Omiso),
			Mensaje: strings.TrimSpace(w.Situacion.Mensaje)}
	}
	for _, a := range w.Actividades {
		t.Actividades = append(t.Actividades, Activity{Codigo: string(a.Codigo), Descripcion: strings.TrimSpace(a.Descripcion),
			Estado: string(a.Estado), Tipo: string(a.Tipo)})
	}
	return t, nil
}

type wireCabys struct {
	Codigo      flexString  `json:"codigo"`
	Descripcion string      `json:"descripcion"`
	Impuesto    flexDecimal `json:"impuesto"`
}

// DecodeCabys reads an answer of /fe/cabys: a search's object with its
// list (cabys), or the bare list a question by code gets.
func DecodeCabys(b []byte) ([]Cabys, error) {
	var list []wireCabys
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("read CAByS entries: %w", err)
		}
	} else {
		var w struct {
			Cabys *[]wireCabys `json:"cabys"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("read CAByS entries: %w", err)
		}
		if w.Cabys == nil {
			return nil, errors.New("read CAByS entries: the answer has no cabys list")
		}
		list = *w.Cabys
	}
	out := make([]Cabys, 0, len(list))
	for _, c := range list {
		out = append(out, Cabys{Codigo: string(c.Codigo), Descripcion: strings.TrimSpace(c.Descripcion), Impuesto: c.Impuesto.d})
	}
	return out, nil
}

// DecodeExoneration reads an answer of /fe/ex.
func DecodeExoneration(b []byte) (Exoneration, error) {
	var w struct {
		NumeroDocumento flexString `json:"numeroDocumento"`
		Autorizacion    flexString `json:"autorizacion"`
		Identificacion  flexString `json:"identificacion"`
		TipoDocumento   *struct {
			Codigo      flexString `json:"codigo"`
			Descripcion string     `json:"descripcion"`
		} `json:"tipoDocumento"`
		CodigoInstitucion     flexString   `json:"CodigoInstitucion"`
		NombreInstitucion     string       `json:"nombreInstitucion"`
		FechaEmision          flexTime     `json:"fechaEmision"`
		FechaVencimiento      flexTime     `json:"fechaVencimiento"`
		PorcentajeExoneracion flexDecimal  `json:"porcentajeExoneracion"`
		PoseeCabys            bool         `json:"poseeCabys"`
		Cabys                 []flexString `json:"cabys"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Exoneration{}, fmt.Errorf("read an exoneration: %w", err)
	}
	if w.NumeroDocumento == "" && w.Identificacion == "" {
		return Exoneration{}, errors.New("read an exoneration: the answer has neither a number nor an identification")
	}
	e := Exoneration{
		Autorizacion:          string(w.NumeroDocumento),
		Identificacion:        string(w.Identificacion),
		CodigoInstitucion:     string(w.CodigoInstitucion),
		NombreInstitucion:     strings.TrimSpace(w.NombreInstitucion),
		FechaEmision:          w.FechaEmision.t,
		FechaVencimiento:      w.FechaVencimiento.t,
		PorcentajeExoneracion: w.PorcentajeExoneracion.d,
		PoseeCabys:            w.PoseeCabys,
		Cabys:                 []string{},
	}
	if w.TipoDocumento != nil {
		e.TipoDocumento = CodeName{Codigo: string(w.TipoDocumento.Codigo), Descripcion: strings.TrimSpace(w.TipoDocumento.Descripcion)}
	}
	for _, c := range w.Cabys {
		e.Cabys = append(e.Cabys, string(c))
	}
	return e, nil
}

// DecodeRates reads an answer of /indicadores/tc/dolar/historico: the
// rates of each day asked.
func DecodeRates(b []byte) ([]Rate, error) {
	var w []struct {
		Fecha  flexTime    `json:"fecha"`
		Compra flexDecimal `json:"compra"`
		Venta  flexDecimal `json:"venta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("read exchange rates: %w", err)
	}
	out := make([]Rate, 0, len(w))
	for _, r := range w {
		if r.Fecha.t.IsZero() || !r.Venta.d.IsPositive() {
			return nil, fmt.Errorf("read exchange rates: an entry without a date or a rate")
		}
		out = append(out, Rate{Fecha: r.Fecha.t.Format(time.DateOnly), Compra: r.Compra.d, Venta: r.Venta.d})
	}
	return out, nil
}

// DecodeDollar reads an answer of /indicadores/tc/dolar: today's sale and
// purchase rates, each with its date.
func DecodeDollar(b []byte) (Rate, error) {
	var w struct {
		Venta, Compra *struct {
			Fecha flexTime    `json:"fecha"`
			Valor flexDecimal `json:"valor"`
		}
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Rate{}, fmt.Errorf("read the dollar's rate: %w", err)
	}
	if w.Venta == nil || w.Venta.Fecha.t.IsZero() || !w.Venta.Valor.d.IsPositive() {
		return Rate{}, errors.New("read the dollar's rate: no sale rate with its date")
	}
	r := Rate{Moneda: "USD", Fecha: w.Venta.Fecha.t.Format(time.DateOnly), Venta: w.Venta.Valor.d}
	if w.Compra != nil {
		r.Compra = w.Compra.Valor.d
	}
	return r, nil
}
