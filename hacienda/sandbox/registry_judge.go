package sandbox

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"facturad/hacienda"
)

// registryFindings judges an issued document against the simulated
// registries (Options.RegistryChecks): the DetalleMensaje lines of what
// the tax authority would refuse. The wording is the sandbox's own.
func registryFindings(in docInfo) []string {
	var out []string
	if in.typ.Code == hacienda.TypeFE && hacienda.IsNationalID(in.receptorTipo) {
		t, found := lookupTaxpayer(in.receptorNumero)
		switch {
		case found != taxpayerFound:
			out = append(out, fmt.Sprintf("El receptor con identificación %s no se encuentra inscrito en el registro de contribuyentes de la Administración Tributaria: "+
				"una factura electrónica requiere un receptor inscrito (para un receptor no inscrito emita un tiquete electrónico).", in.receptorNumero))
		case !t.registered():
			out = append(out, fmt.Sprintf("El receptor con identificación %s no se encuentra inscrito en el registro de contribuyentes de la Administración Tributaria (situación: %s): "+
				"una factura electrónica requiere un receptor inscrito (para un receptor no inscrito emita un tiquete electrónico).", in.receptorNumero, t.Situacion.Estado))
		}
	}
	day := ""
	if f, err := time.Parse(time.RFC3339, in.fechaEmision); err == nil {
		day = f.In(hacienda.CostaRica).Format(time.DateOnly)
	}
	for i, l := range in.lines {
		linea := l.numero
		if linea == "" {
			linea = fmt.Sprint(i + 1)
		}
		if l.cabys != "" {
			if _, ok := lookupCabys(l.cabys); !ok {
				out = append(out, fmt.Sprintf("El código CAByS %s de la línea %s no existe en el catálogo de bienes y servicios vigente.", l.cabys, linea))
			}
		}
		for _, x := range l.exons {
			if hacienda.ExoneracionInRegistry(x.tipo) {
				out = append(out, exonerationFindings(in, linea, l.cabys, x, day)...)
			}
		}
	}
	return out
}

// exonerationFindings judges one exoneration of line linea against its
// authorisation; day is the document's FechaEmision's day ("" when
// unreadable: the consistency check reports it).
func exonerationFindings(in docInfo, linea, cabys string, x docExon, day string) []string {
	e, found, _ := lookupExoneration(x.numero)
	if !found {
		return []string{fmt.Sprintf("La exoneración %s de la línea %s no existe en el registro de exoneraciones de la Administración Tributaria.", x.numero, linea)}
	}
	var out []string
	if e.Identificacion != in.receptorNumero {
		out = append(out, fmt.Sprintf("La exoneración %s de la línea %s pertenece a otro contribuyente, no al receptor del comprobante.", x.numero, linea))
	}
	if day != "" && e.expired(day) {
		out = append(out, fmt.Sprintf("La exoneración %s de la línea %s está vencida: su fecha de vencimiento (%s) es anterior a la FechaEmision del comprobante.",
			x.numero, linea, e.FechaVencimiento[:10]))
	}
	if cabys != "" && !e.covers(cabys) {
		out = append(out, fmt.Sprintf("El código CAByS %s de la línea %s no está incluido en la exoneración %s.", cabys, linea, x.numero))
	}
	if t, err := decimal.NewFromString(x.tarifa); err == nil && t.GreaterThan(decimal.NewFromInt(int64(e.PorcentajeExoneracion))) {
		out = append(out, fmt.Sprintf("La TarifaExonerada (%s) de la línea %s supera el porcentaje autorizado (%d) por la exoneración %s.",
			x.tarifa, linea, e.PorcentajeExoneracion, x.numero))
	}
	return out
}
