package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"facturad/hacienda"
)

// Policy is what a send does with what Check found (A.13): refuse the
// document (a 400 naming the field, no number taken), warn (the document
// goes on, the answer carries advertencias), or off (the registries are
// not asked).
type Policy string

// The policies. A company's empty policy is the service's.
const (
	PolicyRefuse Policy = "refuse"
	PolicyWarn   Policy = "warn"
	PolicyOff    Policy = "off"
)

// ParsePolicy reads a policy; "" is an error (a company's empty policy is
// resolved with Effective).
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(strings.TrimSpace(s))); p {
	case PolicyRefuse, PolicyWarn, PolicyOff:
		return p, nil
	}
	return "", fmt.Errorf("registry checks %q: want refuse, warn or off", s)
}

// Effective is the policy a company's setting makes of the service's: its
// own when set, the service's otherwise.
func Effective(service Policy, company string) Policy {
	if p, err := ParsePolicy(company); err == nil {
		return p
	}
	return service
}

// Finding is one thing Check found: the request field it is about, what it
// says in Spanish and in English, and whether it refuses the document
// (under the refuse policy) or only warns.
type Finding struct {
	Field  string
	Es, En string
	Refuse bool
}

// registeredReceptorTypes are the document types whose receptor, with a
// national identification, must be in the taxpayer registry: FE, ND, NC
// and TE (never the seller of an FEC, who is the XML's Emisor).
var registeredReceptorTypes = []hacienda.DocumentType{hacienda.TypeFE, hacienda.TypeND, hacienda.TypeNC, hacienda.TypeTE}

// Check judges a calculated document against the registries. It never
// fails: when a registry cannot be asked and nothing is cached, it says so
// in a warning; an answer served stale turns what would refuse into a
// warning, so that nothing is refused because the registry is down.
func (r *Registry) Check(ctx context.Context, doc *hacienda.Document) []Finding {
	c := &checker{r: r, doc: doc}
	c.plan()
	c.run(ctx)
	c.judge()
	return c.out
}

// checker is one Check: the questions a document raises, asked at once,
// then judged in the document's order.
type checker struct {
	r   *Registry
	doc *hacienda.Document

	taxpayers map[string]*answer[Taxpayer]
	cabys     map[string]*answer[Cabys]
	exons     map[string]*answer[Exoneration]

	out []Finding
}

type answer[T any] struct {
	v    T
	meta Meta
	err  error
}

func (c *checker) plan() {
	c.taxpayers = map[string]*answer[Taxpayer]{}
	c.cabys = map[string]*answer[Cabys]{}
	c.exons = map[string]*answer[Exoneration]{}
	d := c.doc
	if d.CodigoActividadEmisor != "" && d.Type != hacienda.TypeFEC {
		c.taxpayers[d.Emisor.Identificacion.Numero] = nil
	}
	if d.Receptor != nil && hacienda.IsNationalID(d.Receptor.Identificacion.Tipo) {
		if slices.Contains(registeredReceptorTypes, d.Type) || d.CodigoActividadReceptor != "" {
			c.taxpayers[d.Receptor.Identificacion.Numero] = nil
		}
	}
	for _, l := range d.DetalleServicio {
		if l.CodigoCABYS != "" {
			c.cabys[l.CodigoCABYS] = nil
		}
		for _, t := range l.Impuesto {
			if x := t.Exoneracion; x != nil && hacienda.ExoneracionInRegistry(x.TipoDocumentoEX1) {
				c.exons[x.NumeroDocumento] = nil
			}
		}
	}
}

// run asks every question at once.
func (c *checker) run(ctx context.Context) {
	var wg sync.WaitGroup
	ask := func(f func()) { wg.Go(f) }
	for id := range c.taxpayers {
		a := &answer[Taxpayer]{}
		c.taxpayers[id] = a
		ask(func() { a.v, a.meta, a.err = c.r.Taxpayer(ctx, id) })
	}
	for code := range c.cabys {
		a := &answer[Cabys]{}
		c.cabys[code] = a
		ask(func() { a.v, a.meta, a.err = c.r.Cabys(ctx, code) })
	}
	for n := range c.exons {
		a := &answer[Exoneration]{}
		c.exons[n] = a
		ask(func() { a.v, a.meta, a.err = c.r.Exoneration(ctx, n) })
	}
	wg.Wait()
}

// add records a finding; one the registry's stale answer supports only
// warns, and says so.
func (c *checker) add(field string, meta Meta, refuse bool, es, en string) {
	if meta.Desactualizado && refuse {
		day := meta.Consultado.In(hacienda.CostaRica).Format(time.DateOnly)
		es += fmt.Sprintf(" (según la respuesta del registro del %s; no se pudo consultar de nuevo)", day)
		en += fmt.Sprintf(" (per the registry's answer of %s; it could not be asked again)", day)
		refuse = false
	}
	f := Finding{Field: field, Es: es, En: en, Refuse: refuse}
	if !slices.Contains(c.out, f) {
		c.out = append(c.out, f)
	}
}

// unreachable records that a question could not be asked: never a
// refusal.
func (c *checker) unreachable(field string, err error, es, en string) {
	if errors.As(err, new(*MalformedError)) {
		c.add(field, Meta{}, false, "el registro de Hacienda no aceptó la consulta: "+es+" no se verificó",
			"the tax authority's registry refused the question: "+en+" was not checked")
		return
	}
	c.add(field, Meta{}, false, "no se pudo consultar el registro de Hacienda: "+es+" no se verificó",
		"the tax authority's registry could not be reached: "+en+" was not checked")
}

func (c *checker) judge() {
	d := c.doc
	if d.CodigoActividadEmisor != "" && d.Type != hacienda.TypeFEC {
		c.ownActivity("codigo_actividad_emisor", d.Emisor.Identificacion.Numero, d.CodigoActividadEmisor)
	}
	if d.Receptor != nil && hacienda.IsNationalID(d.Receptor.Identificacion.Tipo) {
		c.receptor()
	}
	for i, l := range d.DetalleServicio {
		c.line(i, l)
	}
}

// ownActivity checks that the company's activity is one of its active
// ones.
func (c *checker) ownActivity(field, id, code string) {
	a := c.taxpayers[id]
	switch {
	case errors.Is(a.err, ErrNotRegistered) || a.err == nil && !a.v.Registered():
		c.add(field, a.meta, true,
			fmt.Sprintf("la identificación %s de la compañía no está inscrita en el registro de contribuyentes: revise la identificación de la compañía", id),
			fmt.Sprintf("the company's identification %s is not in the taxpayer registry: check the company's identification", id))
		return
	case a.err != nil:
		c.unreachable(field, a.err, "la actividad económica", "the economic activity")
		return
	}
	act, ok := a.v.Activity(code)
	switch {
	case !ok:
		c.add(field, a.meta, true,
			fmt.Sprintf("la actividad %s no es una de las inscritas por %s; sus actividades activas son: %s", code, id, activeCodes(a.v)),
			fmt.Sprintf("activity %s is not one of %s's registered activities; its active ones are: %s", code, id, activeCodes(a.v)))
	case !act.Active():
		c.add(field, a.meta, true,
			fmt.Sprintf("la actividad %s de %s está inactiva en el registro; sus actividades activas son: %s", code, id, activeCodes(a.v)),
			fmt.Sprintf("activity %s of %s is inactive in the registry; its active ones are: %s", code, id, activeCodes(a.v)))
	}
}

func activeCodes(t Taxpayer) string {
	var codes []string
	for _, a := range t.Actividades {
		if a.Active() {
			codes = append(codes, a.Codigo)
		}
	}
	if len(codes) == 0 {
		return "ninguna / none"
	}
	return strings.Join(codes, ", ")
}

// receptor checks the receptor's registration and activity.
func (c *checker) receptor() {
	d := c.doc
	id := d.Receptor.Identificacion.Numero
	a, asked := c.taxpayers[id]
	if !asked {
		return
	}
	if d.Type == hacienda.TypeFEC {
		// The XML's receptor is the company, buying.
		c.ownActivity("codigo_actividad_receptor", id, d.CodigoActividadReceptor)
		return
	}
	const field = "ReceptorRequest.Identificacion"
	switch {
	case errors.Is(a.err, ErrNotRegistered) || a.err == nil && !a.v.Registered():
		if slices.Contains(registeredReceptorTypes, d.Type) {
			es := fmt.Sprintf("el receptor %s no está inscrito en el registro de contribuyentes de Hacienda", id)
			en := fmt.Sprintf("the receptor %s is not registered in the tax authority's taxpayer registry", id)
			if a.err == nil {
				es += fmt.Sprintf(" (situación: %s)", a.v.Situacion.Estado)
				en += fmt.Sprintf(" (standing: %s)", a.v.Situacion.Estado)
			}
			switch d.Type {
			case hacienda.TypeFE:
				es += ": emita un tiquete electrónico (04) en su lugar, o corrija la identificación"
				en += ": issue a tiquete (04) instead, or correct the identification"
			case hacienda.TypeTE:
				es += ": corrija la identificación, o emita el tiquete sin receptor"
				en += ": correct the identification, or issue the tiquete without a receptor"
			default:
				es += ": corrija la identificación"
				en += ": correct the identification"
			}
			c.add(field, a.meta, true, es, en)
		}
		if a.err != nil {
			return
		}
	case a.err != nil:
		c.unreachable(field, a.err, "el receptor", "the receptor")
		return
	}
	if code := d.CodigoActividadReceptor; code != "" {
		act, ok := a.v.Activity(code)
		switch {
		case !ok:
			c.add("codigo_actividad_receptor", a.meta, true,
				fmt.Sprintf("la actividad %s no es una de las del receptor %s; sus actividades activas son: %s", code, id, activeCodes(a.v)),
				fmt.Sprintf("activity %s is not one of the receptor %s's; its active ones are: %s", code, id, activeCodes(a.v)))
		case !act.Active():
			c.add("codigo_actividad_receptor", a.meta, false,
				fmt.Sprintf("la actividad %s del receptor %s está inactiva en el registro", code, id),
				fmt.Sprintf("activity %s of the receptor %s is inactive in the registry", code, id))
		}
	}
}

// line checks a line's CAByS code and its exonerations.
func (c *checker) line(i int, l hacienda.LineaDetalle) {
	path := fmt.Sprintf("detalleServicio[%d]", i)
	if l.CodigoCABYS != "" {
		a := c.cabys[l.CodigoCABYS]
		switch {
		case errors.Is(a.err, ErrNotRegistered):
			c.add(path+".codigoCABYS", a.meta, true,
				fmt.Sprintf("el código CAByS %s no está en el catálogo vigente (CAByS 2025): búsquelo en /api/registry/cabys/v4?q=", l.CodigoCABYS),
				fmt.Sprintf("CAByS code %s is not in the catalog in force (CAByS 2025): look it up at /api/registry/cabys/v4?q=", l.CodigoCABYS))
		case a.err != nil:
			c.unreachable(path+".codigoCABYS", a.err, "el código CAByS", "the CAByS code")
		default:
			if rate, ok := ivaRate(l); ok && !rate.Decimal().Equal(a.v.Impuesto) {
				c.add(path+".codigoCABYS", Meta{}, false,
					fmt.Sprintf("el catálogo CAByS da al código %s una tarifa de IVA de %s %%, y la línea usa %s %%", l.CodigoCABYS, a.v.Impuesto, rate.Decimal()),
					fmt.Sprintf("the CAByS catalog gives code %s an IVA rate of %s %%, and the line uses %s %%", l.CodigoCABYS, a.v.Impuesto, rate.Decimal()))
			}
		}
	}
	for j, t := range l.Impuesto {
		if x := t.Exoneracion; x != nil && hacienda.ExoneracionInRegistry(x.TipoDocumentoEX1) {
			c.exoneration(fmt.Sprintf("%s.impuesto[%d].exoneracion", path, j), l, x)
		}
	}
}

// ivaRate is the line's IVA rate, when it has one.
func ivaRate(l hacienda.LineaDetalle) (hacienda.Amount, bool) {
	for _, t := range l.Impuesto {
		if t.Codigo == "01" {
			return t.Tarifa, true
		}
	}
	return hacienda.Amount{}, false
}

// exoneration checks one exoneration against its authorisation.
func (c *checker) exoneration(path string, l hacienda.LineaDetalle, x *hacienda.Exoneracion) {
	a := c.exons[x.NumeroDocumento]
	num := path + ".numeroDocumento"
	switch {
	case errors.Is(a.err, ErrNotRegistered):
		c.add(num, a.meta, true,
			fmt.Sprintf("la autorización de exoneración %s no existe en el registro de exoneraciones de Hacienda", x.NumeroDocumento),
			fmt.Sprintf("exoneration authorisation %s does not exist in the tax authority's exoneration registry", x.NumeroDocumento))
		return
	case a.err != nil:
		c.unreachable(num, a.err, "la exoneración", "the exoneration")
		return
	}
	e, d := a.v, c.doc
	// A document whose caller gave no date is dated when it is numbered,
	// right after the checks.
	at := d.FechaEmision
	if at.IsZero() {
		at = c.r.now()
	}
	if d.Receptor == nil || e.Identificacion != d.Receptor.Identificacion.Numero {
		c.add(num, a.meta, true,
			fmt.Sprintf("la autorización %s pertenece a otro contribuyente (%s), no al receptor del documento", x.NumeroDocumento, e.Identificacion),
			fmt.Sprintf("authorisation %s belongs to another taxpayer (%s), not to the document's receptor", x.NumeroDocumento, e.Identificacion))
	}
	if e.Expired(at) {
		day := e.FechaVencimiento.Format(time.DateOnly)
		c.add(num, a.meta, true,
			fmt.Sprintf("la autorización %s venció el %s, antes de la fecha de emisión", x.NumeroDocumento, day),
			fmt.Sprintf("authorisation %s expired on %s, before the issue date", x.NumeroDocumento, day))
	}
	if l.CodigoCABYS != "" && !e.Covers(l.CodigoCABYS) {
		c.add(num, a.meta, true,
			fmt.Sprintf("la autorización %s no incluye el código CAByS %s de la línea", x.NumeroDocumento, l.CodigoCABYS),
			fmt.Sprintf("authorisation %s does not cover the line's CAByS code %s", x.NumeroDocumento, l.CodigoCABYS))
	}
	if x.TarifaExonerada.Decimal().GreaterThan(e.PorcentajeExoneracion) {
		c.add(path+".tarifaExonerada", a.meta, true,
			fmt.Sprintf("%s supera el porcentaje autorizado (%s) por la autorización %s", x.TarifaExonerada.Decimal(), e.PorcentajeExoneracion, x.NumeroDocumento),
			fmt.Sprintf("%s is above the percentage (%s) authorisation %s allows", x.TarifaExonerada.Decimal(), e.PorcentajeExoneracion, x.NumeroDocumento))
	}
	if !e.FechaEmision.IsZero() && !x.FechaEmisionEX.IsZero() &&
		e.FechaEmision.Format(time.DateOnly) != x.FechaEmisionEX.In(hacienda.CostaRica).Format(time.DateOnly) {
		c.add(path+".fechaEmisionEX", Meta{}, false,
			fmt.Sprintf("la autorización %s se emitió el %s según el registro", x.NumeroDocumento, e.FechaEmision.Format(time.DateOnly)),
			fmt.Sprintf("authorisation %s was issued on %s per the registry", x.NumeroDocumento, e.FechaEmision.Format(time.DateOnly)))
	}
}
