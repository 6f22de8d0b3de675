package hacienda

import "time"

// This file holds the v4.4 document model. Field names are the XML element
// names of the official schemas (Go-exported as they are); JSON tags are the
// element names with the first letter lower-cased, a repeated element being a
// slice under its singular name. Which elements a document type carries, and
// their order, is the XML builder's business: the model is the union over
// the types FE, ND, NC, TE, FEC, FEE and REP, and each field's comment says
// where it exists when it does not exist everywhere.
//
// Amounts: every money amount, quantity, rate and percentage is an [Amount].
// Fields marked "computed" are filled by [Calculate]; callers never supply
// them. An absent optional Amount (IsSet false) means "do not write the
// element".

// Document is one v4.4 electronic document (any issued type), unsigned.
//
// Header fields come first, in XML order. Emisor is always the party that
// issues the XML: for a Factura Electrónica de Compra (08) that is the
// seller, and the company issuing through this service is the Receptor.
type Document struct {
	// Type selects the root element, namespace and rules. It is not an XML
	// element (the root element carries it).
	Type DocumentType `json:"tipoDocumento"`

	// Clave is the 50-digit key.
	Clave string `json:"clave"`
	// ProveedorSistemas is the identification number of the software
	// provider (≤20 chars), mandatory in every type.
	ProveedorSistemas string `json:"proveedorSistemas"`
	// CodigoActividadEmisor is the issuer's 6-character economic activity
	// (1..1 FE, TE, FEE; 0..1 ND, NC, FEC; absent REP).
	CodigoActividadEmisor string `json:"codigoActividadEmisor,omitempty"`
	// CodigoActividadReceptor is the receiver's activity (0..1 FE, ND, NC;
	// 1..1 FEC; absent TE, FEE, REP).
	CodigoActividadReceptor string `json:"codigoActividadReceptor,omitempty"`
	// NumeroConsecutivo is the 20-digit consecutive number.
	NumeroConsecutivo string `json:"numeroConsecutivo"`
	// FechaEmision is the issue instant; the XML writes it in Costa Rica
	// time with an explicit -06:00 offset.
	FechaEmision time.Time `json:"fechaEmision"`

	Emisor Party `json:"emisor"`
	// Receptor is nil when the document has none (allowed in TE, NC, ND,
	// FEE).
	Receptor *Party `json:"receptor,omitempty"`

	// CondicionVenta is the sale condition code (nota 5).
	CondicionVenta string `json:"condicionVenta"`
	// CondicionVentaOtros describes condition 99 (5–100 chars; absent REP).
	CondicionVentaOtros string `json:"condicionVentaOtros,omitempty"`
	// PlazoCredito is the credit term in days (≤5 digits); 0 means absent.
	// Absent in REP.
	PlazoCredito int `json:"plazoCredito,omitempty"`

	// DetalleServicio is the list of LineaDetalle (0..1000; at least one
	// in FEC, FEE, REP).
	DetalleServicio []LineaDetalle `json:"detalleServicio"`
	// OtrosCargos holds 0..15 other charges (absent REP).
	OtrosCargos []OtroCargo `json:"otrosCargos,omitempty"`
	// ResumenFactura is the summary; its totals are computed.
	ResumenFactura ResumenFactura `json:"resumenFactura"`
	// InformacionReferencia holds 0..10 references (1..10 in ND, NC, FEC,
	// REP).
	InformacionReferencia []InformacionReferencia `json:"informacionReferencia,omitempty"`
	// Otros is free commercial content; nil when absent (absent REP).
	Otros *Otros `json:"otros,omitempty"`
}

// Issuer returns the identification of the company issuing the document:
// the XML Emisor's, or the Receptor's in a purchase invoice (FEC).
func (d *Document) Issuer() Identificacion {
	if d.Type.info().IssuedByBuyer && d.Receptor != nil {
		return d.Receptor.Identificacion
	}
	return d.Emisor.Identificacion
}

// Party is an Emisor or a Receptor (EmisorType / ReceptorType). The union of
// both element sets; which children a given type writes is the XML
// builder's business:
//
//   - Emisor: Nombre (5–100), Identificacion, Registrofiscal8707,
//     NombreComercial, Ubicacion (1..1 FE, TE, FEE; 0..1 NC, ND, FEC),
//     OtrasSenasExtranjero (FEC only), Telefono, CorreoElectronico 1..4
//     (0..4 NC, ND, FEC). REP: only Nombre, Identificacion,
//     CorreoElectronico.
//   - Receptor: Nombre (3–100), Identificacion (0..1 in TE, NC, ND, FEE),
//     NombreComercial, Ubicacion (absent FEE), OtrasSenasExtranjero (absent
//     FEC), Telefono, CorreoElectronico 0..1. REP: only Nombre,
//     Identificacion, CorreoElectronico.
type Party struct {
	Nombre string `json:"nombre"`
	// Identificacion is the zero value when absent (receptor of TE, NC, ND,
	// FEE).
	Identificacion Identificacion `json:"identificacion,omitzero"`
	// Registrofiscal8707 is the liquor-tax registry number (Ley 8707),
	// Emisor only, ≤12 chars. Note the schema's lower-case "f".
	Registrofiscal8707 string `json:"registrofiscal8707,omitempty"`
	NombreComercial    string `json:"nombreComercial,omitempty"`
	// Ubicacion is nil when absent.
	Ubicacion *Ubicacion `json:"ubicacion,omitempty"`
	// OtrasSenasExtranjero is a foreign address (5–300 chars).
	OtrasSenasExtranjero string `json:"otrasSenasExtranjero,omitempty"`
	// Telefono is nil when absent.
	Telefono *Telefono `json:"telefono,omitempty"`
	// CorreoElectronico holds the e-mail addresses (each ≤160 chars). The
	// Emisor writes up to 4; the Receptor's schema allows only one, so the
	// XML carries the first and the others are kept for delivery only.
	CorreoElectronico []string `json:"correoElectronico,omitempty"`
}

// Identificacion is an identification (IdentificacionType).
type Identificacion struct {
	// Tipo is the nota-4 code: 01 física, 02 jurídica, 03 DIMEX, 04 NITE,
	// 05 extranjero no domiciliado, 06 no contribuyente.
	Tipo string `json:"tipo"`
	// Numero is the number, ≤20 chars (digits only for 01–04).
	Numero string `json:"numero"`
}

// IsZero reports whether the identification is absent.
func (i Identificacion) IsZero() bool { return i.Tipo == "" && i.Numero == "" }

// Ubicacion is a Costa Rican address (UbicacionType). Codes are kept as the
// XML writes them: Provincia one digit, Canton and Distrito two digits
// ("01").
type Ubicacion struct {
	Provincia string `json:"provincia"`
	Canton    string `json:"canton"`
	Distrito  string `json:"distrito"`
	// Barrio is a free-text neighbourhood name (5–50 chars), optional.
	Barrio string `json:"barrio,omitempty"`
	// OtrasSenas is the rest of the address (5–250 chars), mandatory.
	OtrasSenas string `json:"otrasSenas"`
}

// Telefono is a phone number (TelefonoType): country code up to 3 digits,
// number 8–20 digits. Both are kept as digit strings.
type Telefono struct {
	CodigoPais  string `json:"codigoPais"`
	NumTelefono string `json:"numTelefono"`
}

// LineaDetalle is one detail line (the LineaDetalle element of
// DetalleServicio), in XML order.
type LineaDetalle struct {
	// NumeroLinea is the 1-based line number (1..1000).
	NumeroLinea int `json:"numeroLinea"`
	// PartidaArancelaria is the 12-character tariff heading (FEE, NC, ND
	// only; mandatory for goods in FEE).
	PartidaArancelaria string `json:"partidaArancelaria,omitempty"`
	// CodigoCABYS is the 13-digit CAByS code (absent in REP; 0..1 in NC,
	// ND). Its first digit decides goods (0–4) or service (5–9).
	CodigoCABYS string `json:"codigoCABYS,omitempty"`
	// CodigoComercial holds 0..5 commercial codes.
	CodigoComercial []CodigoComercial `json:"codigoComercial,omitempty"`
	// Cantidad is the quantity, decimal 16,3, > 0 (absent REP).
	Cantidad Amount `json:"cantidad,omitzero"`
	// UnidadMedida is a nota-15 symbol, case-sensitive (absent REP).
	UnidadMedida string `json:"unidadMedida,omitempty"`
	// TipoTransaccion is the nota-22 code (absent TE, REP).
	TipoTransaccion string `json:"tipoTransaccion,omitempty"`
	// UnidadMedidaComercial is a free-text unit (≤20 chars).
	UnidadMedidaComercial string `json:"unidadMedidaComercial,omitempty"`
	// Detalle describes the line (3–200 chars).
	Detalle string `json:"detalle"`
	// NumeroVINoSerie holds VIN / serial numbers (each ≤17 chars).
	NumeroVINoSerie []string `json:"numeroVINoSerie,omitempty"`
	// RegistroMedicamento is the health-ministry registry (≤100 chars).
	RegistroMedicamento string `json:"registroMedicamento,omitempty"`
	// FormaFarmaceutica is the pharmaceutical-form code (≤3 chars).
	FormaFarmaceutica string `json:"formaFarmaceutica,omitempty"`
	// DetalleSurtido lists the components of a pack. Modelled for
	// completeness; this service does not issue packs yet and validation
	// refuses them.
	DetalleSurtido []LineaDetalleSurtido `json:"detalleSurtido,omitempty"`
	// PrecioUnitario is the unit price (absent REP).
	PrecioUnitario Amount `json:"precioUnitario,omitzero"`
	// MontoTotal = Cantidad × PrecioUnitario (computed). In REP it is the
	// amount paid on the original item, given by the caller.
	MontoTotal Amount `json:"montoTotal,omitzero"`
	// Descuento holds 0..5 discounts (absent REP).
	Descuento []Descuento `json:"descuento,omitempty"`
	// SubTotal = MontoTotal − Σ MontoDescuento (computed). In REP the
	// payment amount on which IVA is due, given by the caller.
	SubTotal Amount `json:"subTotal,omitzero"`
	// IVACobradoFabrica is nota 21 (01, 02) (absent FEC, FEE, REP).
	IVACobradoFabrica string `json:"iVACobradoFabrica,omitempty"`
	// BaseImponible is the IVA base (computed; left absent in FEE and REP,
	// whose schemas have no such element). The caller
	// may set it only with IVACobradoFabrica 01 or an IVA of code 07.
	BaseImponible Amount `json:"baseImponible,omitzero"`
	// Impuesto holds the taxes (1..1000; 0..1000 in REP).
	Impuesto []Impuesto `json:"impuesto,omitempty"`
	// ImpuestoAsumidoEmisorFabrica is the tax the issuer bears (regalía,
	// bonificación) or that was charged at factory level (computed; 1..1
	// FE, TE; 0..1 NC, ND; absent FEC, FEE, REP).
	ImpuestoAsumidoEmisorFabrica Amount `json:"impuestoAsumidoEmisorFabrica,omitzero"`
	// ImpuestoNeto = Σ Monto − Σ MontoExoneracion − ImpuestoAsumido
	// (computed; left absent in FEE, whose schema has no such element).
	ImpuestoNeto Amount `json:"impuestoNeto,omitzero"`
	// MontoTotalLinea = SubTotal + ImpuestoNeto (computed).
	MontoTotalLinea Amount `json:"montoTotalLinea,omitzero"`
}

// CodigoComercial is a commercial product code (CodigoType).
type CodigoComercial struct {
	// Tipo is the nota-12 code (01, 02, 03, 04, 99).
	Tipo string `json:"tipo"`
	// Codigo is the code, ≤20 chars.
	Codigo string `json:"codigo"`
}

// Descuento is a line discount (DescuentoType). Discounts cascade: each
// one given as a percentage applies to MontoTotal minus the discounts
// before it.
type Descuento struct {
	// PorcentajeDescuento is the discount as a percentage (10 = 10 %). Not
	// an XML element: input of the API only. When set, MontoDescuento is
	// computed from it.
	PorcentajeDescuento Amount `json:"porcentajeDescuento,omitzero"`
	// MontoDescuento is the discount amount (given, or computed from
	// PorcentajeDescuento).
	MontoDescuento Amount `json:"montoDescuento,omitzero"`
	// CodigoDescuento is the nota-20 code (mandatory).
	CodigoDescuento string `json:"codigoDescuento"`
	// CodigoDescuentoOTRO describes code 99 (5–100 chars).
	CodigoDescuentoOTRO string `json:"codigoDescuentoOTRO,omitempty"`
	// NaturalezaDescuento explains the discount (3–80 chars; mandatory
	// with code 99).
	NaturalezaDescuento string `json:"naturalezaDescuento,omitempty"`
}

// Impuesto is one tax of a line (ImpuestoType).
type Impuesto struct {
	// Codigo is the nota-8 tax code (01 IVA, 02, 03, 04, 05, 06, 07, 08,
	// 12, 99).
	Codigo string `json:"codigo"`
	// CodigoImpuestoOTRO describes code 99 (5–100 chars).
	CodigoImpuestoOTRO string `json:"codigoImpuestoOTRO,omitempty"`
	// CodigoTarifaIVA is the nota-8.1 rate code (mandatory for 01, 07).
	CodigoTarifaIVA string `json:"codigoTarifaIVA,omitempty"`
	// Tarifa is the rate as a percentage number (13 = 13 %), decimal 4,2.
	Tarifa Amount `json:"tarifa,omitzero"`
	// FactorCalculoIVA is the used-goods factor (code 08), decimal 5,4.
	FactorCalculoIVA Amount `json:"factorCalculoIVA,omitzero"`
	// DatosImpuestoEspecifico carries the data of the specific taxes
	// (codes 03–06); nil when absent (absent FEC, FEE, REP).
	DatosImpuestoEspecifico *DatosImpuestoEspecifico `json:"datosImpuestoEspecifico,omitempty"`
	// Monto is the tax amount (computed).
	Monto Amount `json:"monto,omitzero"`
	// MontoExportacion is the export tax amount (FEE, NC, ND only),
	// optional, given by the caller.
	MontoExportacion Amount `json:"montoExportacion,omitzero"`
	// Exoneracion is nil when the tax is not exonerated (absent FEE, REP).
	Exoneracion *Exoneracion `json:"exoneracion,omitempty"`
}

// DatosImpuestoEspecifico holds the quantities of a specific tax.
type DatosImpuestoEspecifico struct {
	// CantidadUnidadMedida: litres (03), ml per container (04, 05, 06);
	// decimal 7,2.
	CantidadUnidadMedida Amount `json:"cantidadUnidadMedida,omitzero"`
	// Porcentaje is the alcohol percentage (04), decimal 4,2.
	Porcentaje Amount `json:"porcentaje,omitzero"`
	// Proporcion is the ml of absolute alcohol (04), decimal 5,2.
	Proporcion Amount `json:"proporcion,omitzero"`
	// VolumenUnidadConsumo is the reference volume or soap grams (05),
	// decimal 7,2.
	VolumenUnidadConsumo Amount `json:"volumenUnidadConsumo,omitzero"`
	// ImpuestoUnidad is the tax per unit set by law.
	ImpuestoUnidad Amount `json:"impuestoUnidad,omitzero"`
}

// Exoneracion is the exoneration of one tax (ExoneracionType).
type Exoneracion struct {
	// TipoDocumentoEX1 is the nota-10.1 code (the "1" is part of the name).
	TipoDocumentoEX1 string `json:"tipoDocumentoEX1"`
	// TipoDocumentoOTRO describes code 99 (5–100 chars).
	TipoDocumentoOTRO string `json:"tipoDocumentoOTRO,omitempty"`
	// NumeroDocumento is the authorisation number (3–40 chars).
	NumeroDocumento string `json:"numeroDocumento"`
	// Articulo is the article of the law (≤6 digits); 0 means absent.
	Articulo int `json:"articulo,omitempty"`
	// Inciso is the inciso (≤6 digits); 0 means absent.
	Inciso int `json:"inciso,omitempty"`
	// NombreInstitucion is the nota-23 code of the institution.
	NombreInstitucion string `json:"nombreInstitucion"`
	// NombreInstitucionOtros names institution 99 (5–160 chars).
	NombreInstitucionOtros string `json:"nombreInstitucionOtros,omitempty"`
	// FechaEmisionEX is the exoneration document's issue date.
	FechaEmisionEX time.Time `json:"fechaEmisionEX"`
	// TarifaExonerada is the exonerated rate in percentage points
	// (13 = all of a 13 % IVA), decimal 4,2.
	TarifaExonerada Amount `json:"tarifaExonerada,omitzero"`
	// MontoExoneracion = TarifaExonerada/100 × base (computed).
	MontoExoneracion Amount `json:"montoExoneracion,omitzero"`

	// Set by the JSON decoder when a value could not be read, so that
	// validation reports it by its path.
	badFecha, badArticulo, badInciso bool
}

// LineaDetalleSurtido is one component of a pack (one unit of the pack).
// Modelled for completeness; see LineaDetalle.DetalleSurtido.
type LineaDetalleSurtido struct {
	CodigoCABYSSurtido           string             `json:"codigoCABYSSurtido"`
	CodigoComercialSurtido       []CodigoComercial  `json:"codigoComercialSurtido,omitempty"`
	CantidadSurtido              Amount             `json:"cantidadSurtido,omitzero"`
	UnidadMedidaSurtido          string             `json:"unidadMedidaSurtido"`
	UnidadMedidaComercialSurtido string             `json:"unidadMedidaComercialSurtido,omitempty"`
	DetalleSurtido               string             `json:"detalleSurtido"`
	PrecioUnitarioSurtido        Amount             `json:"precioUnitarioSurtido,omitzero"`
	MontoTotalSurtido            Amount             `json:"montoTotalSurtido,omitzero"`
	DescuentoSurtido             []DescuentoSurtido `json:"descuentoSurtido,omitempty"`
	SubTotalSurtido              Amount             `json:"subTotalSurtido,omitzero"`
	IVACobradoFabricaSurtido     string             `json:"iVACobradoFabricaSurtido,omitempty"`
	BaseImponibleSurtido         Amount             `json:"baseImponibleSurtido,omitzero"`
	ImpuestoSurtido              []ImpuestoSurtido  `json:"impuestoSurtido,omitempty"`
}

// DescuentoSurtido is a discount of a pack component.
type DescuentoSurtido struct {
	MontoDescuentoSurtido  Amount `json:"montoDescuentoSurtido,omitzero"`
	CodigoDescuentoSurtido string `json:"codigoDescuentoSurtido"`
	DescuentoSurtidoOtros  string `json:"descuentoSurtidoOtros,omitempty"`
}

// ImpuestoSurtido is a tax of a pack component.
type ImpuestoSurtido struct {
	CodigoImpuestoSurtido          string                          `json:"codigoImpuestoSurtido"`
	CodigoImpuestoOTROSurtido      string                          `json:"codigoImpuestoOTROSurtido,omitempty"`
	CodigoTarifaIVASurtido         string                          `json:"codigoTarifaIVASurtido,omitempty"`
	TarifaSurtido                  Amount                          `json:"tarifaSurtido,omitzero"`
	DatosImpuestoEspecificoSurtido *DatosImpuestoEspecificoSurtido `json:"datosImpuestoEspecificoSurtido,omitempty"`
	MontoImpuestoSurtido           Amount                          `json:"montoImpuestoSurtido,omitzero"`
}

// DatosImpuestoEspecificoSurtido holds the specific-tax data of a pack
// component.
type DatosImpuestoEspecificoSurtido struct {
	CantidadUnidadMedidaSurtido Amount `json:"cantidadUnidadMedidaSurtido,omitzero"`
	PorcentajeSurtido           Amount `json:"porcentajeSurtido,omitzero"`
	ProporcionSurtido           Amount `json:"proporcionSurtido,omitzero"`
	VolumenUnidadConsumoSurtido Amount `json:"volumenUnidadConsumoSurtido,omitzero"`
	ImpuestoUnidadSurtido       Amount `json:"impuestoUnidadSurtido,omitzero"`
}

// OtroCargo is one other charge (OtrosCargosType). Other charges are not part
// of TotalVenta, carry no IVA and are added at TotalComprobante.
type OtroCargo struct {
	// TipoDocumentoOC is the nota-16 code.
	TipoDocumentoOC string `json:"tipoDocumentoOC"`
	// TipoDocumentoOTROS describes code 99 (5–100 chars).
	TipoDocumentoOTROS string `json:"tipoDocumentoOTROS,omitempty"`
	// IdentificacionTercero identifies the third party (mandatory with
	// code 04); zero value when absent.
	IdentificacionTercero Identificacion `json:"identificacionTercero,omitzero"`
	// NombreTercero names the third party (5–100 chars; with code 04).
	NombreTercero string `json:"nombreTercero,omitempty"`
	// Detalle describes the charge (≤160 chars).
	Detalle string `json:"detalle"`
	// PorcentajeOC is the charge as a percentage (10 = 10 %) of
	// TotalVentaNeta, decimal 9,5; when set, MontoCargo is computed.
	PorcentajeOC Amount `json:"porcentajeOC,omitzero"`
	// MontoCargo is the charge (given, or computed from PorcentajeOC).
	MontoCargo Amount `json:"montoCargo,omitzero"`
}

// ResumenFactura is the document summary. Every total is computed; the
// caller gives only CodigoTipoMoneda and MedioPago (whose TotalMedioPago may
// be left for the calculation when there is a single means of payment).
//
// Calculate fills every total with a present value (0 where nothing
// applies); the XML builder writes those that exist in the document type's
// schema (FEE has no exonerado/no-sujeto totals, FEC and FEE no
// TotalIVADevuelto, REP only TotalVenta, TotalVentaNeta,
// TotalDesgloseImpuesto, TotalImpuesto, MedioPago, TotalComprobante).
type ResumenFactura struct {
	CodigoTipoMoneda CodigoTipoMoneda `json:"codigoTipoMoneda"`

	TotalServGravados         Amount                  `json:"totalServGravados,omitzero"`
	TotalServExentos          Amount                  `json:"totalServExentos,omitzero"`
	TotalServExonerado        Amount                  `json:"totalServExonerado,omitzero"`
	TotalServNoSujeto         Amount                  `json:"totalServNoSujeto,omitzero"`
	TotalMercanciasGravadas   Amount                  `json:"totalMercanciasGravadas,omitzero"`
	TotalMercanciasExentas    Amount                  `json:"totalMercanciasExentas,omitzero"`
	TotalMercExonerada        Amount                  `json:"totalMercExonerada,omitzero"`
	TotalMercNoSujeta         Amount                  `json:"totalMercNoSujeta,omitzero"`
	TotalGravado              Amount                  `json:"totalGravado,omitzero"`
	TotalExento               Amount                  `json:"totalExento,omitzero"`
	TotalExonerado            Amount                  `json:"totalExonerado,omitzero"`
	TotalNoSujeto             Amount                  `json:"totalNoSujeto,omitzero"`
	TotalVenta                Amount                  `json:"totalVenta,omitzero"`
	TotalDescuentos           Amount                  `json:"totalDescuentos,omitzero"`
	TotalVentaNeta            Amount                  `json:"totalVentaNeta,omitzero"`
	TotalDesgloseImpuesto     []TotalDesgloseImpuesto `json:"totalDesgloseImpuesto,omitempty"`
	TotalImpuesto             Amount                  `json:"totalImpuesto,omitzero"`
	TotalImpAsumEmisorFabrica Amount                  `json:"totalImpAsumEmisorFabrica,omitzero"`
	TotalIVADevuelto          Amount                  `json:"totalIVADevuelto,omitzero"`
	TotalOtrosCargos          Amount                  `json:"totalOtrosCargos,omitzero"`
	// MedioPago holds 0..4 means of payment (1..4 in REP).
	MedioPago        []MedioPago `json:"medioPago,omitempty"`
	TotalComprobante Amount      `json:"totalComprobante,omitzero"`
}

// CodigoTipoMoneda is the currency and its exchange rate to the colón
// (CodigoMonedaType). CRC has TipoCambio exactly 1.
type CodigoTipoMoneda struct {
	CodigoMoneda string `json:"codigoMoneda"`
	TipoCambio   Amount `json:"tipoCambio,omitzero"`
}

// TotalDesgloseImpuesto is the net tax total of one (Codigo,
// CodigoTarifaIVA) group.
type TotalDesgloseImpuesto struct {
	Codigo string `json:"codigo"`
	// CodigoTarifaIVA is set for IVA codes 01 and 07 only.
	CodigoTarifaIVA    string `json:"codigoTarifaIVA,omitempty"`
	TotalMontoImpuesto Amount `json:"totalMontoImpuesto"`
}

// MedioPago is one means of payment.
type MedioPago struct {
	// TipoMedioPago is the nota-6 code.
	TipoMedioPago string `json:"tipoMedioPago"`
	// MedioPagoOtros describes code 99 (3–100 chars).
	MedioPagoOtros string `json:"medioPagoOtros,omitempty"`
	// TotalMedioPago is the amount paid this way. With a single means of
	// payment Calculate sets it to TotalComprobante when absent; with
	// several, each must be given and they must add up to
	// TotalComprobante.
	TotalMedioPago Amount `json:"totalMedioPago,omitzero"`
}

// InformacionReferencia is a reference to another document.
type InformacionReferencia struct {
	// TipoDocIR is the nota-10 code of the referenced document.
	TipoDocIR string `json:"tipoDocIR"`
	// TipoDocRefOTRO describes code 99 (5–100 chars).
	TipoDocRefOTRO string `json:"tipoDocRefOTRO,omitempty"`
	// Numero is the referenced document's clave or number (≤50 chars;
	// mandatory except with TipoDocIR 13).
	Numero string `json:"numero,omitempty"`
	// FechaEmisionIR is the referenced document's issue date.
	FechaEmisionIR time.Time `json:"fechaEmisionIR"`
	// Codigo is the nota-9 reference code (mandatory except with
	// TipoDocIR 13).
	Codigo string `json:"codigo,omitempty"`
	// CodigoReferenciaOTRO describes code 99 (5–100 chars).
	CodigoReferenciaOTRO string `json:"codigoReferenciaOTRO,omitempty"`
	// Razon is the reason (≤180 chars; mandatory except with TipoDocIR 13).
	Razon string `json:"razon,omitempty"`

	// Set by the JSON decoder when FechaEmisionIR could not be read.
	badFecha bool
}

// Otros is free commercial content, not tax-relevant.
type Otros struct {
	OtroTexto     []OtroTexto `json:"otroTexto,omitempty"`
	OtroContenido []OtroTexto `json:"otroContenido,omitempty"`
}

// OtroTexto is one OtroTexto or OtroContenido element: a text (≤500 chars)
// with an optional codigo attribute.
type OtroTexto struct {
	Codigo string `json:"codigo,omitempty"`
	// Valor is the element's text content.
	Valor string `json:"valor"`
}
