package pdf

// The descriptions the printed document shows for the codes of the XML
// (Anexo 1 asks, for several code lists, that printing shows the
// description, not the code). A code that is not in its list is printed
// as the code alone: the document still renders, and nothing is invented.

// described returns "code description", or the code alone when the
// description is unknown, or "" for an empty code.
func described(list map[string]string, code string) string {
	if code == "" {
		return ""
	}
	if d, ok := list[code]; ok {
		return code + " " + d
	}
	return code
}

// descriptionOnly returns the description of a code, or the code when it
// has none.
func descriptionOnly(list map[string]string, code string) string {
	if d, ok := list[code]; ok {
		return d
	}
	return code
}

// estados are the document states of the contract (A.5), in Spanish.
var estados = map[string]string{
	"00": "Pendiente de envío",
	"01": "Aceptado por Hacienda",
	"02": "Rechazado por Hacienda",
	"03": "Error en Hacienda",
	"04": "Enviado, en proceso en Hacienda",
	"05": "No enviado aún",
}

// estadosSandbox name the states of a document the built-in sandbox
// judged: its verdict is the simulator's, not the tax authority's.
var estadosSandbox = map[string]string{
	"01": "Aceptado por el simulador",
	"02": "Rechazado por el simulador",
	"03": "Error en el simulador",
	"04": "Enviado al simulador, en proceso",
}

// tiposIdentificacion is nota 4.
var tiposIdentificacion = map[string]string{
	"01": "Cédula física",
	"02": "Cédula jurídica",
	"03": "DIMEX",
	"04": "NITE",
	"05": "Extranjero no domiciliado",
	"06": "No contribuyente",
}

// condicionesVenta is nota 5.
var condicionesVenta = map[string]string{
	"01": "Contado",
	"02": "Crédito",
	"03": "Consignación",
	"04": "Apartado",
	"05": "Arrendamiento con opción de compra",
	"06": "Arrendamiento en función financiera",
	"07": "Cobro a favor de un tercero",
	"08": "Servicios prestados al Estado",
	"09": "Pago de servicios prestados al Estado",
	"10": "Venta a crédito en IVA hasta 90 días",
	"11": "Pago de venta a crédito en IVA hasta 90 días",
	"12": "Venta de mercancía no nacionalizada",
	"13": "Venta de bienes usados no contribuyente",
	"14": "Arrendamiento operativo",
	"15": "Arrendamiento financiero",
	"99": "Otros",
}

// mediosPago is nota 6.
var mediosPago = map[string]string{
	"01": "Efectivo",
	"02": "Tarjeta",
	"03": "Cheque",
	"04": "Transferencia o depósito bancario",
	"05": "Recaudado por terceros",
	"06": "SINPE Móvil",
	"07": "Plataforma digital",
	"99": "Otros",
}

// impuestos is nota 8, short enough for a table cell.
var impuestos = map[string]string{
	"01": "IVA",
	"02": "Selectivo de Consumo",
	"03": "Único a los Combustibles",
	"04": "Bebidas Alcohólicas",
	"05": "Bebidas sin alcohol y jabones",
	"06": "Productos de Tabaco",
	"07": "IVA (cálculo especial)",
	"08": "IVA Bienes Usados",
	"12": "Específico al Cemento",
	"99": "Otros",
}

// tarifasIVA is nota 8.1.
var tarifasIVA = map[string]string{
	"01": "Tarifa 0% (art. 32 RLIVA)",
	"02": "Tarifa reducida 1%",
	"03": "Tarifa reducida 2%",
	"04": "Tarifa reducida 4%",
	"05": "Transitorio 0%",
	"06": "Transitorio 4%",
	"07": "Tarifa transitoria 8%",
	"08": "Tarifa general 13%",
	"09": "Tarifa reducida 0,5%",
	"10": "Tarifa exenta",
	"11": "Tarifa 0% sin derecho a crédito",
}

// tiposExoneracion is nota 10.1.
var tiposExoneracion = map[string]string{
	"01": "Compras autorizadas por la DGT",
	"02": "Ventas exentas a diplomáticos",
	"03": "Autorizado por ley especial",
	"04": "Exenciones DGH Autorización Local Genérica",
	"05": "Exenciones DGH Transitorio V",
	"06": "Servicios turísticos inscritos ante el ICT",
	"07": "Transitorio XVII",
	"08": "Exoneración a Zona Franca",
	"09": "Servicios complementarios para la exportación",
	"10": "Órgano de las corporaciones municipales",
	"11": "Exenciones DGH Autorización de Impuesto Local Concreta",
	"99": "Otros",
}

// instituciones is nota 23.
var instituciones = map[string]string{
	"01": "Ministerio de Hacienda",
	"02": "Ministerio de Relaciones Exteriores y Culto",
	"03": "Ministerio de Agricultura y Ganadería",
	"04": "Ministerio de Economía, Industria y Comercio",
	"05": "Cruz Roja Costarricense",
	"06": "Benemérito Cuerpo de Bomberos de Costa Rica",
	"07": "Asociación Obras del Espíritu Santo",
	"08": "Fecrunapa",
	"09": "EARTH",
	"10": "INCAE",
	"11": "Junta de Protección Social",
	"12": "ARESEP",
	"99": "Otros",
}

// tiposOtrosCargos is nota 16.
var tiposOtrosCargos = map[string]string{
	"01": "Contribución parafiscal",
	"02": "Timbre de la Cruz Roja",
	"03": "Timbre del Benemérito Cuerpo de Bomberos",
	"04": "Cobro de un tercero",
	"05": "Costos de exportación",
	"06": "Impuesto de servicio 10%",
	"07": "Timbre de Colegios Profesionales",
	"08": "Depósitos de garantía",
	"09": "Multas o penalizaciones",
	"10": "Intereses moratorios",
	"99": "Otros cargos",
}

// tiposDocReferencia is nota 10.
var tiposDocReferencia = map[string]string{
	"01": "Factura electrónica",
	"02": "Nota de débito electrónica",
	"03": "Nota de crédito electrónica",
	"04": "Tiquete electrónico",
	"05": "Nota de despacho",
	"06": "Contrato",
	"07": "Procedimiento",
	"08": "Comprobante emitido en contingencia",
	"09": "Devolución de mercadería",
	"10": "Comprobante rechazado por el Ministerio de Hacienda",
	"11": "Sustituye factura rechazada por el receptor",
	"12": "Sustituye factura de exportación",
	"13": "Facturación mes vencido",
	"14": "Comprobante aportado por contribuyente de régimen especial",
	"15": "Sustituye una factura electrónica de compra",
	"16": "Comprobante de proveedor no domiciliado",
	"17": "Nota de crédito a factura electrónica de compra",
	"18": "Nota de débito a factura electrónica de compra",
	"99": "Otros",
}

// codigosReferencia is nota 9.
var codigosReferencia = map[string]string{
	"01": "Anula documento de referencia",
	"02": "Corrige monto",
	"04": "Referencia a otro documento",
	"05": "Sustituye comprobante provisional por contingencia",
	"06": "Devolución de mercancía",
	"07": "Sustituye comprobante electrónico",
	"08": "Factura endosada",
	"09": "Nota de crédito financiera",
	"10": "Nota de débito financiera",
	"11": "Proveedor no domiciliado",
	"12": "Crédito por exoneración posterior a la facturación",
	"99": "Otros",
}

// codigosDescuento is nota 20.
var codigosDescuento = map[string]string{
	"01": "Regalía",
	"02": "Regalía con IVA cobrado al cliente",
	"03": "Bonificación",
	"04": "Volumen",
	"05": "Temporada",
	"06": "Promocional",
	"07": "Comercial",
	"08": "Frecuencia",
	"09": "Sostenido",
	"99": "Otros",
}

// situaciones is the situation of the clave's digit 42 (nota 3).
var situaciones = map[byte]string{
	'1': "Normal",
	'2': "Contingencia",
	'3': "Sin internet",
}
