package hacienda

import (
	"encoding/json"
	"time"

	"facturad/hacienda/msg"
)

// AmountsCalculateDocumentResponse is the answer of POST
// /api/documents/calculate/v4 (contract A.5). Every key the contract lists
// is always written (null when it does not apply); the input's descriptive
// fields (codes, descriptions) are echoed next to them.
type AmountsCalculateDocumentResponse struct {
	DetalleServicio []CalculatedLine `json:"detalleServicio"`
	// OtrosCargos is null when the request had none.
	OtrosCargos    []OtroCargo       `json:"otrosCargos"`
	ResumenFactura CalculatedResumen `json:"resumenFactura"`
}

// CalculatedLine is one line of the calculate answer.
type CalculatedLine struct {
	NumeroLinea       int    `json:"numeroLinea"`
	CodigoCABYS       string `json:"codigoCABYS,omitempty"`
	UnidadMedida      string `json:"unidadMedida,omitempty"`
	Detalle           string `json:"detalle,omitempty"`
	IVACobradoFabrica string `json:"iVACobradoFabrica,omitempty"`

	Cantidad                     Amount                `json:"cantidad"`
	PrecioUnitario               Amount                `json:"precioUnitario"`
	MontoTotal                   Amount                `json:"montoTotal"`
	Descuento                    []CalculatedDescuento `json:"descuento"`
	SubTotal                     Amount                `json:"subTotal"`
	BaseImponible                Amount                `json:"baseImponible"`
	Impuesto                     []CalculatedImpuesto  `json:"impuesto"`
	ImpuestoAsumidoEmisorFabrica Amount                `json:"impuestoAsumidoEmisorFabrica"`
	ImpuestoNeto                 Amount                `json:"impuestoNeto"`
	MontoTotalLinea              Amount                `json:"montoTotalLinea"`
}

// CalculatedDescuento is a discount of the calculate answer.
type CalculatedDescuento struct {
	CodigoDescuento     string `json:"codigoDescuento,omitempty"`
	PorcentajeDescuento Amount `json:"porcentajeDescuento"`
	MontoDescuento      Amount `json:"montoDescuento"`
}

// CalculatedImpuesto is a tax of the calculate answer.
type CalculatedImpuesto struct {
	Codigo                  string                   `json:"codigo,omitempty"`
	CodigoTarifaIVA         string                   `json:"codigoTarifaIVA,omitempty"`
	Tarifa                  Amount                   `json:"tarifa"`
	FactorCalculoIVA        Amount                   `json:"factorCalculoIVA"`
	DatosImpuestoEspecifico *DatosImpuestoEspecifico `json:"datosImpuestoEspecifico"`
	Monto                   Amount                   `json:"monto"`
	Exoneracion             *Exoneracion             `json:"exoneracion"`
}

// CalculatedResumen is the summary of the calculate answer.
type CalculatedResumen struct {
	CodigoTipoMoneda          CodigoTipoMoneda        `json:"codigoTipoMoneda"`
	TotalServGravados         Amount                  `json:"totalServGravados"`
	TotalServExentos          Amount                  `json:"totalServExentos"`
	TotalServExonerado        Amount                  `json:"totalServExonerado"`
	TotalServNoSujeto         Amount                  `json:"totalServNoSujeto"`
	TotalMercanciasGravadas   Amount                  `json:"totalMercanciasGravadas"`
	TotalMercanciasExentas    Amount                  `json:"totalMercanciasExentas"`
	TotalMercExonerada        Amount                  `json:"totalMercExonerada"`
	TotalMercNoSujeta         Amount                  `json:"totalMercNoSujeta"`
	TotalGravado              Amount                  `json:"totalGravado"`
	TotalExento               Amount                  `json:"totalExento"`
	TotalExonerado            Amount                  `json:"totalExonerado"`
	TotalNoSujeto             Amount                  `json:"totalNoSujeto"`
	TotalVenta                Amount                  `json:"totalVenta"`
	TotalDescuentos           Amount                  `json:"totalDescuentos"`
	TotalVentaNeta            Amount                  `json:"totalVentaNeta"`
	TotalDesgloseImpuesto     []TotalDesgloseImpuesto `json:"totalDesgloseImpuesto"`
	TotalImpuesto             Amount                  `json:"totalImpuesto"`
	TotalImpAsumEmisorFabrica Amount                  `json:"totalImpAsumEmisorFabrica"`
	TotalIVADevuelto          Amount                  `json:"totalIVADevuelto"`
	TotalOtrosCargos          Amount                  `json:"totalOtrosCargos"`
	MedioPago                 []CalculatedMedioPago   `json:"medioPago"`
	TotalComprobante          Amount                  `json:"totalComprobante"`
}

// CalculatedMedioPago is a means of payment of the calculate answer.
type CalculatedMedioPago struct {
	TipoMedioPago  string  `json:"tipoMedioPago"`
	MedioPagoOtros *string `json:"medioPagoOtros"`
	TotalMedioPago Amount  `json:"totalMedioPago"`
}

// CalculateAmounts runs the calculation of a calculate request and builds
// the answer. Only the calculation rules are checked (codes, rates against
// their rate codes, quantities, decimals, discounts, payments…), not the
// structural rules of a whole document; problems come back as a
// *ValidationError with every field path at once. tipo_documento defaults
// to 01 (FE) and selects the per-type rules (REP lines, FEE buckets,
// transitional rates in notes).
func CalculateAmounts(req *CalculateRequest) (*AmountsCalculateDocumentResponse, error) {
	var e errs
	if req == nil {
		e.add(bodyPath, msg.BodyEmpty.With())
		return nil, e.err()
	}
	var doc Document
	calculateRequest(req, &doc, &e)
	if !e.ok() {
		return nil, e.err()
	}
	return NewCalculateResponse(&doc), nil
}

// calculateRequest calculates the request's body into doc, adding every
// problem found to e.
func calculateRequest(req *CalculateRequest, doc *Document, e *errs) {
	t := DocumentType(req.TipoDocumento.Code())
	if t == "" {
		t = TypeFE
	}
	*doc = Document{Type: t, CondicionVenta: req.CondicionVenta.Code(), DetalleServicio: req.DetalleServicio,
		OtrosCargos: req.OtrosCargos, ResumenFactura: req.ResumenFactura}
	calculate(doc, e)
}

// NewCalculateResponse builds the calculate answer of a calculated
// document.
func NewCalculateResponse(doc *Document) *AmountsCalculateDocumentResponse {
	resp := &AmountsCalculateDocumentResponse{DetalleServicio: make([]CalculatedLine, len(doc.DetalleServicio))}
	for i := range doc.DetalleServicio {
		l := &doc.DetalleServicio[i]
		cl := CalculatedLine{
			NumeroLinea: l.NumeroLinea, CodigoCABYS: l.CodigoCABYS, UnidadMedida: l.UnidadMedida, Detalle: l.Detalle,
			IVACobradoFabrica: l.IVACobradoFabrica,
			Cantidad:          l.Cantidad, PrecioUnitario: l.PrecioUnitario, MontoTotal: l.MontoTotal,
			Descuento: make([]CalculatedDescuento, len(l.Descuento)), SubTotal: l.SubTotal, BaseImponible: l.BaseImponible,
			Impuesto:                     make([]CalculatedImpuesto, len(l.Impuesto)),
			ImpuestoAsumidoEmisorFabrica: l.ImpuestoAsumidoEmisorFabrica, ImpuestoNeto: l.ImpuestoNeto, MontoTotalLinea: l.MontoTotalLinea,
		}
		if cl.NumeroLinea == 0 {
			cl.NumeroLinea = i + 1
		}
		for j, d := range l.Descuento {
			cl.Descuento[j] = CalculatedDescuento{CodigoDescuento: d.CodigoDescuento, PorcentajeDescuento: d.PorcentajeDescuento, MontoDescuento: d.MontoDescuento}
		}
		for j, tx := range l.Impuesto {
			cl.Impuesto[j] = CalculatedImpuesto{Codigo: tx.Codigo, CodigoTarifaIVA: tx.CodigoTarifaIVA, Tarifa: tx.Tarifa,
				FactorCalculoIVA: tx.FactorCalculoIVA, DatosImpuestoEspecifico: tx.DatosImpuestoEspecifico, Monto: tx.Monto, Exoneracion: tx.Exoneracion}
		}
		resp.DetalleServicio[i] = cl
	}
	if len(doc.OtrosCargos) > 0 {
		resp.OtrosCargos = doc.OtrosCargos
	}
	r := &doc.ResumenFactura
	resp.ResumenFactura = CalculatedResumen{
		CodigoTipoMoneda:  r.CodigoTipoMoneda,
		TotalServGravados: r.TotalServGravados, TotalServExentos: r.TotalServExentos, TotalServExonerado: r.TotalServExonerado,
		TotalServNoSujeto: r.TotalServNoSujeto, TotalMercanciasGravadas: r.TotalMercanciasGravadas,
		TotalMercanciasExentas: r.TotalMercanciasExentas, TotalMercExonerada: r.TotalMercExonerada, TotalMercNoSujeta: r.TotalMercNoSujeta,
		TotalGravado: r.TotalGravado, TotalExento: r.TotalExento, TotalExonerado: r.TotalExonerado, TotalNoSujeto: r.TotalNoSujeto,
		TotalVenta: r.TotalVenta, TotalDescuentos: r.TotalDescuentos, TotalVentaNeta: r.TotalVentaNeta,
		TotalDesgloseImpuesto: r.TotalDesgloseImpuesto, TotalImpuesto: r.TotalImpuesto,
		TotalImpAsumEmisorFabrica: r.TotalImpAsumEmisorFabrica, TotalIVADevuelto: r.TotalIVADevuelto,
		TotalOtrosCargos: r.TotalOtrosCargos, TotalComprobante: r.TotalComprobante,
		MedioPago: make([]CalculatedMedioPago, len(r.MedioPago)),
	}
	if resp.ResumenFactura.TotalDesgloseImpuesto == nil {
		resp.ResumenFactura.TotalDesgloseImpuesto = []TotalDesgloseImpuesto{}
	}
	for i, m := range r.MedioPago {
		cm := CalculatedMedioPago{TipoMedioPago: m.TipoMedioPago, TotalMedioPago: m.TotalMedioPago}
		if m.MedioPagoOtros != "" {
			s := m.MedioPagoOtros
			cm.MedioPagoOtros = &s
		}
		resp.ResumenFactura.MedioPago[i] = cm
	}
	return resp
}

// contractDateTime formats t as the contract's ISO 8601 local date-time in
// Costa Rica time, without zone; the zero time gives "".
func contractDateTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(CostaRica).Format("2006-01-02T15:04:05")
}

// MarshalJSON writes FechaEmisionEX as a contract date-time (Costa Rica
// local time, no zone), as requests send it.
func (x Exoneracion) MarshalJSON() ([]byte, error) {
	type plain Exoneracion
	return json.Marshal(struct {
		plain
		FechaEmisionEX string `json:"fechaEmisionEX"`
	}{plain(x), contractDateTime(x.FechaEmisionEX)})
}

// MarshalJSON writes FechaEmisionIR as a contract date-time.
func (r InformacionReferencia) MarshalJSON() ([]byte, error) {
	type plain InformacionReferencia
	return json.Marshal(struct {
		plain
		FechaEmisionIR string `json:"fechaEmisionIR"`
	}{plain(r), contractDateTime(r.FechaEmisionIR)})
}
