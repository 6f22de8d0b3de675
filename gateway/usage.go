package gateway

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
	"facturad/tenant"
)

// Usage is the service behind the usage calls of A.14 (*tenant.Service
// satisfies it): it decides who may read which company's usage (another
// tenant's company is tenant.ErrNotFound) and checks the periodo.
type Usage interface {
	Usage(ctx context.Context, p tenant.Principal, companyID int64, periodo string) (tenant.Usage, error)
	Usages(ctx context.Context, p tenant.Principal, periodo string) (string, []tenant.Usage, error)
}

// UsageRoutes returns the usage calls of A.14: one company's month (for
// anyone who may see the company) and every company the caller manages
// (the admin's all, a reseller's own).
func UsageRoutes(u Usage) []Route {
	h := usageHandlers{u: u}
	return []Route{
		{Method: http.MethodGet, Path: "/api/companies/{companyId}/uso/v4", MaxBody: noBodyLimit, Handle: h.company},
		{Method: http.MethodGet, Path: "/api/uso/v4", MaxBody: noBodyLimit, Handle: h.list},
	}
}

type usageHandlers struct{ u Usage }

// periodo reads the query's periodo (any case of the name); empty means
// the current month. Given twice with two values is a 400 rather than a
// guess.
func periodo(r *Request) (string, error) {
	vs := queryValues(r.Query, api.ParamPeriodo)
	if len(vs) == 0 {
		return "", nil
	}
	v := strings.TrimSpace(vs[0])
	for _, w := range vs[1:] {
		if strings.TrimSpace(w) != v {
			return "", invalid(api.ParamPeriodo, msg.ParamRepeated.With())
		}
	}
	return v, nil
}

func (h usageHandlers) company(ctx context.Context, r *Request) (Reply, error) {
	companyID, err := r.pathID(paramCompanyID, "CompaniaId")
	if err != nil {
		return Reply{}, err
	}
	p, err := periodo(r)
	if err != nil {
		return Reply{}, err
	}
	u, err := h.u.Usage(ctx, r.Principal, companyID, p)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: newUsoAnswer(u)}, nil
}

func (h usageHandlers) list(ctx context.Context, r *Request) (Reply, error) {
	p, err := periodo(r)
	if err != nil {
		return Reply{}, err
	}
	month, us, err := h.u.Usages(ctx, r.Principal, p)
	if err != nil {
		return Reply{}, err
	}
	out := api.UsoLista{Periodo: month, Items: make([]api.Uso, len(us))}
	for i, u := range us {
		out.Items[i] = newUsoAnswer(u)
	}
	return Reply{JSON: out}, nil
}

// newUsoAnswer writes a company's usage; the maps are {} when empty.
func newUsoAnswer(u tenant.Usage) api.Uso {
	orEmpty := func(m map[string]int64) map[string]int64 {
		if m == nil {
			return map[string]int64{}
		}
		return maps.Clone(m)
	}
	return api.Uso{
		CompaniaID: u.CompanyID,
		Periodo:    u.Periodo,
		Documentos: api.UsoDocumentos{Total: u.Documentos.Total,
			PorTipo: orEmpty(u.Documentos.PorTipo), PorEstado: orEmpty(u.Documentos.PorEstado)},
		MensajesReceptor: api.UsoMensajes{Total: u.Mensajes.Total, PorEstado: orEmpty(u.Mensajes.PorEstado)},
	}
}

// quotaRefusal is the 402 of a send beyond the company's monthly quota
// (A.14), in the A.7 form with the quota's field, and the header of the
// documents still available (none).
func quotaRefusal(q tenant.QuotaUse) *apiError {
	return &apiError{status: http.StatusPaymentRequired, msg: msg.QuotaExhausted.With(),
		fields: msg.One(api.FieldCuotaMensual, msg.QuotaUsed.With(q.Used, q.Periodo, q.Limit)),
		header: quotaHeader(&q)}
}

// quotaHeader is the send answer's Facturad-Documentos-Disponibles when the
// company has a quota (q not nil), else no header.
func quotaHeader(q *tenant.QuotaUse) map[string]string {
	if q == nil {
		return nil
	}
	return map[string]string{api.HeaderDocumentosDisponibles: strconv.FormatInt(q.Available(), 10)}
}
