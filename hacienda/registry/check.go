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
	"facturad/hacienda/msg"
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
// says (an entry of the catalogue, rendered in the caller's language), and
// whether it refuses the document (under the refuse policy) or only warns.
type Finding struct {
	Field  string
	Msg    msg.Message
	Refuse bool
}

// Same reports whether f and o say the same thing about the same field.
func (f Finding) Same(o Finding) bool {
	return f.Field == o.Field && f.Refuse == o.Refuse && f.Msg.Equal(o.Msg)
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
func (c *checker) add(field string, meta Meta, refuse bool, m msg.Message) {
	if meta.Desactualizado && refuse {
		day := meta.Consultado.In(hacienda.CostaRica).Format(time.DateOnly)
		m = msg.RegistryStale.With(m, day)
		refuse = false
	}
	f := Finding{Field: field, Msg: m, Refuse: refuse}
	if !slices.ContainsFunc(c.out, f.Same) {
		c.out = append(c.out, f)
	}
}

// unreachable records that a question could not be asked about what:
// never a refusal.
func (c *checker) unreachable(field string, err error, what *msg.Entry) {
	if errors.As(err, new(*MalformedError)) {
		c.add(field, Meta{}, false, msg.RegistryRefusedQuestion.With(what.With()))
		return
	}
	c.add(field, Meta{}, false, msg.RegistryUnreachable.With(what.With()))
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
		c.add(field, a.meta, true, msg.CompanyNotRegistered.With(id))
		return
	case a.err != nil:
		c.unreachable(field, a.err, msg.RegistryActivity)
		return
	}
	act, ok := a.v.Activity(code)
	switch {
	case !ok:
		c.add(field, a.meta, true, msg.ActivityNotRegistered.With(code, id, activeCodes(a.v)))
	case !act.Active():
		c.add(field, a.meta, true, msg.ActivityInactive.With(code, id, activeCodes(a.v)))
	}
}

// activeCodes lists a taxpayer's active activities, or says none.
func activeCodes(t Taxpayer) any {
	var codes []string
	for _, a := range t.Actividades {
		if a.Active() {
			codes = append(codes, a.Codigo)
		}
	}
	if len(codes) == 0 {
		return msg.NoneActive.With()
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
			var standing any = ""
			if a.err == nil {
				standing = msg.Standing.With(a.v.Situacion.Estado)
			}
			advice := msg.AdviceOther
			switch d.Type {
			case hacienda.TypeFE:
				advice = msg.AdviceFE
			case hacienda.TypeTE:
				advice = msg.AdviceTE
			}
			c.add(field, a.meta, true, msg.ReceptorNotRegistered.With(id, standing, advice.With()))
		}
		if a.err != nil {
			return
		}
	case a.err != nil:
		c.unreachable(field, a.err, msg.RegistryReceptor)
		return
	}
	if code := d.CodigoActividadReceptor; code != "" {
		act, ok := a.v.Activity(code)
		switch {
		case !ok:
			c.add("codigo_actividad_receptor", a.meta, true, msg.ReceptorActivity.With(code, id, activeCodes(a.v)))
		case !act.Active():
			c.add("codigo_actividad_receptor", a.meta, false, msg.ReceptorActivityInactive.With(code, id))
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
			c.add(path+".codigoCABYS", a.meta, true, msg.CabysUnknown.With(l.CodigoCABYS))
		case a.err != nil:
			c.unreachable(path+".codigoCABYS", a.err, msg.RegistryCabys)
		default:
			if rate, ok := ivaRate(l); ok && !rate.Decimal().Equal(a.v.Impuesto) {
				c.add(path+".codigoCABYS", Meta{}, false, msg.CabysRate.With(l.CodigoCABYS, a.v.Impuesto.String(), rate.Decimal().String()))
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
		c.add(num, a.meta, true, msg.ExoneracionUnknown.With(x.NumeroDocumento))
		return
	case a.err != nil:
		c.unreachable(num, a.err, msg.RegistryExoneracion)
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
		c.add(num, a.meta, true, msg.ExoneracionOtherTaxpayer.With(x.NumeroDocumento, e.Identificacion))
	}
	if e.Expired(at) {
		day := e.FechaVencimiento.Format(time.DateOnly)
		c.add(num, a.meta, true, msg.ExoneracionExpired.With(x.NumeroDocumento, day))
	}
	if l.CodigoCABYS != "" && !e.Covers(l.CodigoCABYS) {
		c.add(num, a.meta, true, msg.ExoneracionCabys.With(x.NumeroDocumento, l.CodigoCABYS))
	}
	if x.TarifaExonerada.Decimal().GreaterThan(e.PorcentajeExoneracion) {
		c.add(path+".tarifaExonerada", a.meta, true,
			msg.ExoneracionPercentage.With(x.TarifaExonerada.Decimal().String(), e.PorcentajeExoneracion.String(), x.NumeroDocumento))
	}
	if !e.FechaEmision.IsZero() && !x.FechaEmisionEX.IsZero() &&
		e.FechaEmision.Format(time.DateOnly) != x.FechaEmisionEX.In(hacienda.CostaRica).Format(time.DateOnly) {
		c.add(path+".fechaEmisionEX", Meta{}, false, msg.ExoneracionIssued.With(x.NumeroDocumento, e.FechaEmision.Format(time.DateOnly)))
	}
}
