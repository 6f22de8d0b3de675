package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/hacienda/registry"
)

// Registry answers the registry lookups (A.13) from the shared cache or
// the tax authority's registry (*registry.Registry satisfies it).
type Registry interface {
	Taxpayer(ctx context.Context, id string) (registry.Taxpayer, registry.Meta, error)
	Cabys(ctx context.Context, code string) (registry.Cabys, registry.Meta, error)
	SearchCabys(ctx context.Context, q string, limit int) ([]registry.Cabys, registry.Meta, error)
	Exoneration(ctx context.Context, autorizacion string) (registry.Exoneration, registry.Meta, error)
	Rate(ctx context.Context, moneda string, day time.Time) (registry.Rate, registry.Meta, error)
}

// CABYS search limits.
const (
	defaultCabysLimit = 10
	maxCabysLimit     = 50
)

// RegistryRoutes are the registry lookups of A.13, for any authenticated
// user.
func RegistryRoutes(reg Registry) []Route {
	h := registryHandlers{reg: reg, now: time.Now}
	return []Route{
		{Method: http.MethodGet, Path: "/api/registry/contribuyentes/{identificacion}/v4", MaxBody: noBodyLimit, Handle: h.taxpayer},
		{Method: http.MethodGet, Path: "/api/registry/cabys/v4", MaxBody: noBodyLimit, Handle: h.cabys},
		{Method: http.MethodGet, Path: "/api/registry/exoneraciones/{autorizacion}/v4", MaxBody: noBodyLimit, Handle: h.exoneration},
		{Method: http.MethodGet, Path: "/api/registry/tipo-cambio/v4", MaxBody: noBodyLimit, Handle: h.rate},
	}
}

type registryHandlers struct {
	reg Registry
	now func() time.Time
}

// registryError maps a lookup's failure: not registered is a 404, a
// question the registry refuses a 400 on field, the registry unreachable
// with nothing cached a 503 with Retry-After.
func registryError(err error, field string, notFound msg.Message) error {
	var mal *registry.MalformedError
	var un *registry.UnavailableError
	switch {
	case errors.Is(err, registry.ErrNotRegistered):
		return &apiError{status: http.StatusNotFound, msg: notFound}
	case errors.As(err, &mal):
		return invalid(field, msg.RegistryRefusesValue.With())
	case errors.As(err, &un):
		return &apiError{status: http.StatusServiceUnavailable, retryAfter: un.RetryAfter(), msg: msg.RegistryUnavailable.With()}
	}
	return err
}

func (h registryHandlers) taxpayer(ctx context.Context, r *Request) (Reply, error) {
	id := strings.TrimSpace(r.Params["identificacion"])
	if len(id) < 9 || len(id) > 12 || !isDigits(id) {
		return Reply{}, invalid("identificacion", msg.IdentificationNumber.With())
	}
	t, meta, err := h.reg.Taxpayer(ctx, id)
	if err != nil {
		return Reply{}, registryError(err, "identificacion", msg.TaxpayerNotFound.With(id))
	}
	if !t.Registered() {
		// The registry knows the identification but it is not registered
		// ("No inscrito", "Desinscrito..."): for the contract, not
		// registered.
		return Reply{}, &apiError{status: http.StatusNotFound, msg: msg.TaxpayerNotRegistered.With(id, t.Situacion.Estado)}
	}
	a := api.Contribuyente{
		Identificacion: id, Nombre: t.Nombre, TipoIdentificacion: t.TipoIdentificacion,
		Regimen:     api.Regimen{Codigo: t.Regimen.Codigo, Descripcion: t.Regimen.Descripcion},
		Situacion:   api.Situacion{Estado: t.Situacion.Estado, Moroso: t.Situacion.Moroso, Omiso: t.Situacion.Omiso},
		Actividades: make([]api.Actividad, 0, len(t.Actividades)),
		Consultado:  api.LocalTime(meta.Consultado), Desactualizado: meta.Desactualizado,
	}
	for _, act := range t.Actividades {
		a.Actividades = append(a.Actividades, api.Actividad{Codigo: act.Codigo, Descripcion: act.Descripcion, Estado: act.Estado, Tipo: act.Tipo})
	}
	return Reply{JSON: a}, nil
}

func (h registryHandlers) cabys(ctx context.Context, r *Request) (Reply, error) {
	code, q := strings.TrimSpace(r.Query.Get("codigo")), strings.TrimSpace(r.Query.Get("q"))
	var (
		items []registry.Cabys
		meta  registry.Meta
		err   error
	)
	switch {
	case code != "":
		if len(code) != 13 || !isDigits(code) {
			return Reply{}, invalid("codigo", msg.CabysCode.With())
		}
		var c registry.Cabys
		c, meta, err = h.reg.Cabys(ctx, code)
		if err == nil {
			items = []registry.Cabys{c}
		} else if errors.Is(err, registry.ErrNotRegistered) {
			err = nil // an unknown code: no items
		}
	case q != "":
		if len(q) < 3 || len(q) > 100 {
			return Reply{}, invalid("q", msg.LengthBetween.With(3, 100))
		}
		limit := defaultCabysLimit
		if s := r.Query.Get("limit"); s != "" {
			n, perr := strconv.Atoi(s)
			if perr != nil || n < 1 || n > maxCabysLimit {
				return Reply{}, invalid("limit", msg.LimitRange.With(maxCabysLimit))
			}
			limit = n
		}
		items, meta, err = h.reg.SearchCabys(ctx, q, limit)
	default:
		return Reply{}, invalid("q", msg.CabysQuery.With())
	}
	if err != nil {
		field, asked := "q", q
		if code != "" {
			field, asked = "codigo", code
		}
		return Reply{}, registryError(err, field, msg.CabysNotFound.With(echoed(asked)))
	}
	a := api.CabysList{Items: make([]api.Cabys, 0, len(items)), Consultado: api.LocalTime(meta.Consultado), Desactualizado: meta.Desactualizado}
	for _, c := range items {
		a.Items = append(a.Items, api.Cabys{Codigo: c.Codigo, Descripcion: c.Descripcion, Impuesto: json.Number(c.Impuesto.String())})
	}
	return Reply{JSON: a}, nil
}

func (h registryHandlers) exoneration(ctx context.Context, r *Request) (Reply, error) {
	n := strings.TrimSpace(r.Params["autorizacion"])
	if len(n) < 3 || len(n) > 40 {
		return Reply{}, invalid("autorizacion", msg.Autorizacion.With())
	}
	e, meta, err := h.reg.Exoneration(ctx, n)
	if err != nil {
		return Reply{}, registryError(err, "autorizacion", msg.ExoneracionNotFound.With(n))
	}
	cabys := e.Cabys
	if cabys == nil {
		cabys = []string{}
	}
	return Reply{JSON: api.Exoneracion{
		Autorizacion: e.Autorizacion, Identificacion: e.Identificacion,
		TipoDocumento:         api.CodeNombre{Codigo: e.TipoDocumento.Codigo, Descripcion: e.TipoDocumento.Descripcion},
		NombreInstitucion:     e.NombreInstitucion,
		FechaEmision:          api.LocalTime(e.FechaEmision),
		FechaVencimiento:      api.LocalTime(e.FechaVencimiento),
		PorcentajeExoneracion: json.Number(e.PorcentajeExoneracion.String()),
		PoseeCabys:            e.PoseeCabys, Cabys: cabys,
		Consultado: api.LocalTime(meta.Consultado), Desactualizado: meta.Desactualizado,
	}}, nil
}

func (h registryHandlers) rate(ctx context.Context, r *Request) (Reply, error) {
	moneda := strings.ToUpper(strings.TrimSpace(r.Query.Get("moneda")))
	if moneda == "" {
		moneda = "USD"
	}
	today := h.now().In(hacienda.CostaRica)
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, hacienda.CostaRica)
	if s := r.Query.Get("fecha"); s != "" {
		d, err := time.ParseInLocation(time.DateOnly, s, hacienda.CostaRica)
		if err != nil {
			return Reply{}, invalid("fecha", msg.DateOnly.With())
		}
		if d.After(day) {
			return Reply{}, invalid("fecha", msg.RateFuture.With())
		}
		day = d
	}
	rt, meta, err := h.reg.Rate(ctx, moneda, day)
	if err != nil {
		return Reply{}, registryError(err, "fecha", msg.RateNotFound.With(echoed(moneda), day.Format(time.DateOnly)))
	}
	return Reply{JSON: api.TipoCambio{Moneda: moneda, Fecha: day.Format(time.DateOnly),
		Compra: json.Number(rt.Compra.String()), Venta: json.Number(rt.Venta.String()),
		Consultado: api.LocalTime(meta.Consultado), Desactualizado: meta.Desactualizado}}, nil
}
