package hacienda

import (
	"strings"

	"github.com/shopspring/decimal"
)

// This file is the one place where the readings this package takes of
// points the v4.4 annex leaves AMBIGUOUS or UNVERIFIED are fixed. Each entry
// names the section of the project's v4.4 reference it settles; the same
// list, with the reasoning, is in docs/decisions-v44.md. Change a reading
// here, and only here.

// healthServiceCABYSPrefixes recognise the private health services whose IVA
// is returned when paid by card (TotalIVADevuelto, §11.9). The annex only
// says "códigos CAByS de servicios médicos". CAByS follows the UN Central
// Product Classification, where group 931 is "human health services"
// (hospital, medical, dental and other human health services); social care
// (932, 933) and veterinary services (835) are not health services here.
var healthServiceCABYSPrefixes = []string{"931"}

// isHealthServiceCABYS reports whether a CAByS code is a human health
// service.
func isHealthServiceCABYS(cabys string) bool {
	for _, p := range healthServiceCABYSPrefixes {
		if strings.HasPrefix(cabys, p) {
			return true
		}
	}
	return false
}

// ivaDevueltoOnlyWhenAllCard: TotalIVADevuelto is filled only when every
// means of payment of the document is a card (02). The 2026 revision adds a
// formula for mixed payments that is not available (§11.9); until then a
// mixed payment returns nothing rather than a guessed share.
const ivaDevueltoOnlyWhenAllCard = true

// otrosCargosPorcentajeBase: an other charge given as PorcentajeOC is that
// percentage of TotalVentaNeta (sales after discounts, before taxes). The
// annex gives no base (§7); the 10 % service charge, the usual percentage
// charge, is computed on the consumption before taxes.
const otrosCargosPorcentajeBase = "totalVentaNeta"

// repTotalComprobanteIncludesTax: in a Recibo Electrónico de Pago,
// TotalComprobante = TotalVentaNeta + TotalImpuesto. The annex literally
// says "the sum of TotalVenta" for REP, which would drop the IVA the receipt
// collects; the general formula of the same annex entry is used instead
// (§11.7, AMBIGUOUS).
const repTotalComprobanteIncludesTax = true

// grossIVABase is the base of the IVA of code 01 on a line with a discount
// of code 01, 02 or 03 (see discountTaxesGross): MontoTotal, as the annex
// says for regalías and bonificaciones ("se debe utilizar el campo Monto
// Total y la Tarifa", p.42), without the taxes that enter BaseImponible on
// other lines (02, 04, 05, 12, computed on SubTotal). AMBIGUOUS: the
// annex's BaseImponible adds them; to do so here, return
// montoTotal.Add(specialBase). The IVA of code 07 keeps its own,
// editable, base (§11.4, §11.5; decisions #6, #7).
func grossIVABase(montoTotal, specialBase decimal.Decimal) decimal.Decimal {
	return montoTotal
}

// Discount code 02 ("regalía o bonificación con IVA cobrado al cliente"):
// the IVA is computed on MontoTotal, like codes 01 and 03, but the client
// pays it, so it is not ImpuestoAsumidoEmisorFabrica (§11.5, AMBIGUOUS).
func discountTaxesGross(codigo string) bool {
	return codigo == DescuentoRegalia || codigo == DescuentoRegaliaIVACliente || codigo == DescuentoBonificacion
}

// discountIssuerBearsTax: with codes 01 and 03 the issuer bears the line's
// taxes (ImpuestoAsumidoEmisorFabrica = Σ (Monto − MontoExoneracion) of the
// line, the annex's "resta entre el Monto del Impuesto menos el Monto
// Exonerado").
func discountIssuerBearsTax(codigo string) bool {
	return codigo == DescuentoRegalia || codigo == DescuentoBonificacion
}

// issuerBornTaxExpressible reports whether a document type can carry a tax
// the issuer bears (discount codes 01 and 03): FEC and FEE have no
// ImpuestoAsumidoEmisorFabrica element, so a regalía or bonificación there
// could not be recomputed from the XML and is refused; the caller uses code
// 02 or an ordinary discount instead (§11.5, AMBIGUOUS; decisions #42).
func issuerBornTaxExpressible(t DocumentType) bool {
	return t != TypeFEC && t != TypeFEE
}

// regaliaMustCoverWholeLine: a line with a discount of code 01 or 03 must be
// discounted entirely (SubTotal 0): the annex computes its IVA on MontoTotal
// and makes the whole tax "assumed", which is only right when every unit of
// the line is free. Free units go on their own line (§11.4, §11.12).
const regaliaMustCoverWholeLine = true

// lineWithoutIVABucket: a line whose taxes include no IVA (01, 07, 08), for
// instance fuel with only code 03, counts as Exento (§11.6, AMBIGUOUS;
// conservative reading). The transitional 0 % rate code 05 (NC/ND only)
// also counts as Exento, as 4.3 documents had no "no sujeto" bucket.
const lineWithoutIVABucket = bucketExento

// feeNoSujetoAsExento: the export invoice's summary has no "no sujeto"
// totals, so in an FEE lines at rate codes 01 and 11 count as Exento;
// otherwise TotalVenta could not equal the sum of the lines (§8).
const feeNoSujetoAsExento = true

// listZeroTaxGroups: TotalDesgloseImpuesto lists every (Codigo,
// CodigoTarifaIVA) group present in the lines, also those whose total is 0
// (exempt lines, fully exonerated or assumed taxes) (§11.8, AMBIGUOUS; the
// schema-valid, safer reading).
const listZeroTaxGroups = true

// Code 04 (alcoholic beverages): Proporcion = CantidadUnidadMedida ×
// Porcentaje / 100 (ml of absolute alcohol), rounded to the schema's 2
// decimals, and Monto = Cantidad × Proporcion × ImpuestoUnidad (§11.4,
// AMBIGUOUS: the annex writes "ml × porcentaje" with Porcentaje as a whole
// percentage). A Proporcion given by the caller is used as given.
const proporcionPlaces = 2

// soapCABYSPrefixes tell toilet soap from packaged beverages under tax code
// 05, whose two formulas differ (§11.4): CAByS group 3532 (soaps and
// cleaning preparations) is soap, anything else a beverage.
var soapCABYSPrefixes = []string{"3532"}

func isSoapCABYS(cabys string) bool {
	for _, p := range soapCABYSPrefixes {
		if strings.HasPrefix(cabys, p) {
			return true
		}
	}
	return false
}

// Tax code 99 (otros): Monto = SubTotal × Tarifa / 100, like the other
// rate-based non-IVA taxes (§11.4: "presumably", not specified).

// ivaFabricaSeparadoAssumed: with IVACobradoFabrica 01 the line's IVA (codes
// 01 and 07), computed on the edited BaseImponible, was charged at factory
// level; it is reported as ImpuestoAsumidoEmisorFabrica and not charged
// again (§6 nota 21, §11.5).
const ivaFabricaSeparadoAssumed = true

// lineWithoutCABYSIsService: a credit or debit note may omit CodigoCABYS
// (financial notes); such a line counts as a service in the goods/services
// split (§6, not covered by the annex).
const lineWithoutCABYSIsService = true

// oneIVAPerLine: a line carries at most one IVA tax (code 01, 07 or 08); the
// bucket of a line is decided by its IVA, so two would be contradictory
// (§11.6).
const oneIVAPerLine = true

// Exoneration base: MontoExoneracion = TarifaExonerada / 100 × the amount
// the exonerated tax's Monto is a rate of: for the IVA its own base
// (BaseImponible, the caller's with code 07 or IVACobradoFabrica 01, or
// grossIVABase for code 01 on a line with a discount of code 01, 02 or
// 03); SubTotal for the other rate-based taxes (02, 12, 99). So an exoneration of the whole rate leaves nothing to
// pay whatever the base, and never exceeds the tax (§11.5; decisions #17).
// Per-unit taxes (03–06) cannot be exonerated by a rate and are refused.

// exonerableRate is the rate an exoneration's TarifaExonerada is measured
// against: the tax's Tarifa, or for the used-goods IVA (08), whose Tarifa is
// optional, the rate of its CodigoTarifaIVA. False when neither is known.
func exonerableRate(tx *Impuesto) (decimal.Decimal, bool) {
	if tx.Tarifa.IsSet() {
		return tx.Tarifa.Decimal(), true
	}
	if rt, ok := tarifasIVA[tx.CodigoTarifaIVA]; ok && tx.CodigoTarifaIVA != "" {
		return rt.rate, true
	}
	return decimal.Decimal{}, false
}

// exoneratedShare is the exoneration of the used-goods IVA (08), whose
// Monto is FactorCalculoIVA × SubTotal, not a rate of a base: the share
// TarifaExonerada / rate of its Monto, so that the whole rate exonerates
// the whole tax (§11.5, not covered by the annex; decisions #186).
func exoneratedShare(monto, tarifaExonerada, rate decimal.Decimal) decimal.Decimal {
	if rate.Sign() == 0 {
		return dZero
	}
	if tarifaExonerada.Cmp(rate) == 0 {
		return monto
	}
	return monto.Mul(tarifaExonerada).DivRound(rate, MoneyPlaces)
}

// singlePaymentMustMatch: with one means of payment a given TotalMedioPago
// must equal TotalComprobante (absent, it is set to it). The annex only
// requires the sum for two or more (§8); a single partial amount has no
// meaning in v4.4.
const singlePaymentMustMatch = true

// paymentAmountMustBePositive: a TotalMedioPago of 0 is refused, and a
// document whose total is 0 gets none filled in (its single means of
// payment goes without an amount; several cannot be given, as each would
// need an amount above 0). The annex (p.55): "Se deberá incluir un
// valor mayor a cero. Caso contrario se rechazará el comprobante"
// (decisions #20).
const paymentAmountMustBePositive = true

// amountAndPercentageMustAgree: a discount or other charge given both as an
// amount and as a percentage must agree once the percentage is applied and
// rounded; otherwise the request is refused, so that echoing a calculate
// answer back is accepted and a contradiction is never silently resolved.
const amountAndPercentageMustAgree = true

// Receptor e-mail: the request may carry several addresses separated by ";"
// (the contract); the XML Receptor allows one, so the first is written and
// the others are kept for delivery. In an FEC the seller is the XML Emisor,
// which takes up to 4 (§5.2).
const maxReceptorEmails = 4

// surtidosSupported: packs (DetalleSurtido) are refused for now, as the
// reference recommends for a first version (§6.5).
const surtidosSupported = false
