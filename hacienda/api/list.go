package api

import (
	"net/url"
	"strconv"
	"time"

	"facturad/hacienda"
)

// The listings (A.10): GET /api/documents/v4 and GET /api/received/v4 take
// the same query and answer the same page.

// Page is a page of a listing: its items, newest first, and the cursor of
// the next page, empty on the last one. The webhook delivery log answers
// the same shape.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next"`
}

// The query parameters of a listing, as the contract spells them.
const (
	ParamCompaniaID = "companiaId"
	ParamDesde      = "desde"
	ParamHasta      = "hasta"
	ParamEstado     = "estado"
	ParamTipo       = "tipo_documento"
	ParamIDExterno  = "id_externo"
	ParamReceptor   = "receptor"
	ParamLimit      = "limit"
	ParamCursor     = "cursor"
)

// ListQuery selects the documents a listing returns, issued or received.
// Every field is optional; zero means no filter.
type ListQuery struct {
	// CompaniaID names the company: required for an admin or a reseller;
	// a branch user lists its own company's documents, every branch's.
	CompaniaID int64
	// Desde and Hasta bound the issue time, both included. They are sent
	// as Costa Rica local date-times.
	Desde, Hasta time.Time
	// Estado is a state code (EstadoAccepted...); TipoDocumento a
	// document type code (01 FE, 04 TE...). For received documents, the
	// state of the company's message and the type of the supplier's
	// document (01, 02, 03 or 09).
	Estado        string
	TipoDocumento string
	// IDExterno finds the documents with that id (one per branch at most).
	IDExterno string
	// Receptor is the counterparty's identification number: the send
	// request's receptor (for a purchase invoice, the seller); for
	// received documents, the supplier.
	Receptor string
	// Limit is the page's size, 1 to 500; 0 is the service's default, 50.
	Limit int
}

// Values returns the query of the page that follows cursor ("" for the
// first page).
func (q ListQuery) Values(cursor string) url.Values {
	v := url.Values{}
	if q.CompaniaID != 0 {
		v.Set(ParamCompaniaID, strconv.FormatInt(q.CompaniaID, 10))
	}
	const layout = DateLayout + ".999999"
	if !q.Desde.IsZero() {
		v.Set(ParamDesde, q.Desde.In(hacienda.CostaRica).Format(layout))
	}
	if !q.Hasta.IsZero() {
		v.Set(ParamHasta, q.Hasta.In(hacienda.CostaRica).Format(layout))
	}
	for name, s := range map[string]string{ParamEstado: q.Estado, ParamTipo: q.TipoDocumento, ParamIDExterno: q.IDExterno, ParamReceptor: q.Receptor} {
		if s != "" {
			v.Set(name, s)
		}
	}
	if q.Limit != 0 {
		v.Set(ParamLimit, strconv.Itoa(q.Limit))
	}
	if cursor != "" {
		v.Set(ParamCursor, cursor)
	}
	return v
}
