package pipeline

import (
	"context"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
	"facturad/hacienda/registry"
)

// This file is the send's use of the tax authority's registries (A.13),
// before a number is taken: the exchange rate a document in another
// currency left out, and the checks of the document against the
// taxpayer, CAByS and exoneration registries under the company's policy.

// policy is the registry policy the issuing company's documents follow.
func (j *job) policy() registry.Policy {
	if j.p.o.Registry == nil {
		return registry.PolicyOff
	}
	return registry.Effective(j.p.o.RegistryChecks, j.is.Company.ValidacionesRegistro)
}

// withRate returns the request to build the document from: req itself, or
// a copy with tipoCambio set to the central bank's sale rate of the
// document's day when its currency is not the colón and the caller left
// the rate out. With the policy off the registry is not asked, and the
// rate stays required.
//
// resumed is a document numbered earlier whose send was interrupted, and
// numbered its issue time when it got one (zero otherwise, and for a new
// document, dated by the caller's fecha_emision, else now). A resumed
// document gets its day's rate whatever the policy says now, since it was
// numbered with it; when the rate cannot be had, the answer is to ask
// again later (an *OverloadError), not a refusal: the caller cannot change
// a request that holds a number.
func (j *job) withRate(ctx context.Context, req *hacienda.SendDocumentRequest, resumed bool, numbered time.Time) (*hacienda.SendDocumentRequest, error) {
	m := req.ResumenFactura.CodigoTipoMoneda
	moneda := strings.ToUpper(strings.TrimSpace(m.CodigoMoneda))
	if moneda == "" || moneda == "CRC" || m.TipoCambio.IsSet() || j.p.o.Registry == nil {
		return req, nil
	}
	if !resumed && j.policy() == registry.PolicyOff {
		return req, nil
	}
	at := numbered
	if at.IsZero() {
		at = j.p.o.Clock()
		if req.FechaEmision != "" {
			t, err := hacienda.ParseDateTime(req.FechaEmision)
			if err != nil {
				return req, nil // validation names the date
			}
			if !t.IsZero() { // 0001-01-01T00:00:00 is "not set": now
				at = t
			}
		}
	}
	day := at.In(hacienda.CostaRica)
	rate, _, err := j.p.o.Registry.Rate(ctx, moneda, day)
	if err != nil {
		d := day.Format(time.DateOnly)
		j.log.Info("no exchange rate for a document's day", "moneda", moneda, "day", d, "err", err)
		if resumed {
			return nil, &OverloadError{After: registry.FailureBackoff, Dependency: true,
				Reason: msg.RateUnavailableNumbered.With(moneda, d)}
		}
		reason := registry.Finding{Field: "resumenFactura.codigoTipoMoneda.tipoCambio", Refuse: true,
			Msg: msg.RateUnavailable.With(moneda, d)}
		return nil, &registryRefusal{findings: []registry.Finding{reason}}
	}
	c := *req
	c.ResumenFactura.CodigoTipoMoneda.TipoCambio = hacienda.NewAmount(rate.Venta)
	return &c, nil
}

// checkRegistries judges the calculated document against the registries
// under the company's policy: refusals are a *registryRefusal (a 400 on
// the fields, nothing numbered) under refuse; everything else, and
// everything under warn, is returned to go on the answer.
func (j *job) checkRegistries(ctx context.Context, doc *hacienda.Document) ([]registry.Finding, error) {
	pol := j.policy()
	if pol == registry.PolicyOff {
		return nil, nil
	}
	found := j.p.o.Registry.Check(ctx, doc)
	var refuse, warn []registry.Finding
	for _, f := range found {
		if f.Refuse && pol == registry.PolicyRefuse {
			refuse = append(refuse, f)
		} else {
			warn = append(warn, f)
		}
	}
	j.p.metrics.registry.WithLabelValues("refused").Add(float64(len(refuse)))
	j.p.metrics.registry.WithLabelValues("warned").Add(float64(len(warn)))
	if len(refuse) > 0 {
		return nil, &registryRefusal{findings: refuse}
	}
	return warn, nil
}

// registryRefusal is a document the registries refuse: a validation error
// on each field found, in English and, for a caller who asks for it, in
// Spanish.
type registryRefusal struct{ findings []registry.Finding }

func (e *registryRefusal) Error() string {
	f := e.findings[0]
	return "refused by the registries: " + f.Field + ": " + f.Msg.String()
}

// FieldErrors returns the offending fields and their messages in English.
func (e *registryRefusal) FieldErrors() map[string][]string {
	return msg.Render(e.FieldMessages(), msg.English)
}

// FieldMessages returns the offending fields and their messages.
func (e *registryRefusal) FieldMessages() map[string][]msg.Message {
	m := make(map[string][]msg.Message, len(e.findings))
	for _, f := range e.findings {
		m[f.Field] = append(m[f.Field], f.Msg)
	}
	return m
}
