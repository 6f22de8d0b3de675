package msg

// The rules of a document (a send, a calculation, a derived document):
// its metadata, parties, lines, taxes, other charges, payments and
// references, as the v4.4 annex and its notas state them.
var (
	BodyEmpty = field("body_empty", "the request body is empty", "el cuerpo de la solicitud está vacío")

	IDType = field("identification_type",
		"must be 01 (física), 02 (jurídica), 03 (DIMEX), 04 (NITE), 05 (extranjero no domiciliado) or 06 (no contribuyente)",
		"debe ser 01 (física), 02 (jurídica), 03 (DIMEX), 04 (NITE), 05 (extranjero no domiciliado) o 06 (no contribuyente)")
	IDTypeUnknown = field("identification_type_unknown", "has an unknown identification type", "tiene un tipo de identificación desconocido")
	IDFisica      = field("identification_fisica", "a cédula física has 9 digits, without leading zero or dashes", "una cédula física tiene 9 dígitos, sin cero inicial ni guiones")
	IDJuridica    = field("identification_juridica", "a cédula jurídica has 10 digits, without dashes", "una cédula jurídica tiene 10 dígitos, sin guiones")
	IDDIMEX       = field("identification_dimex", "a DIMEX has 11 or 12 digits, without leading zero", "un DIMEX tiene 11 o 12 dígitos, sin cero inicial")
	IDNITE        = field("identification_nite", "a NITE has 10 digits", "un NITE tiene 10 dígitos")
	IDForeign     = field("identification_foreign", "must be up to 20 letters and digits", "debe tener hasta 20 letras y dígitos")

	Provincia       = field("provincia_code", "must be a province code 1–7", "debe ser un código de provincia del 1 al 7")
	Canton          = field("canton_code", "must be a 2-digit canton code", "debe ser un código de cantón de 2 dígitos")
	Distrito        = field("distrito_code", "must be a 2-digit district code", "debe ser un código de distrito de 2 dígitos")
	LocationUnknown = field("location_unknown", "province %s, canton %s, district %s is not in the nota-14 list",
		"la provincia %s, cantón %s, distrito %s no está en la lista de la nota 14")
	PhoneCountry = field("phone_country_code", "must be 1 to 3 digits", "debe tener de 1 a 3 dígitos")
	PhoneNumber  = field("phone_number", "must be 8 to 20 digits", "debe tener de 8 a 20 dígitos")

	ClaveDigits            = field("clave_digits", "must be 50 digits", "debe tener 50 dígitos")
	ClaveTypeMismatch      = field("clave_type_mismatch", "its document type %s does not match tipo_documento %s", "su tipo de documento %s no coincide con tipo_documento %s")
	ClaveSituacionMismatch = field("clave_situacion_mismatch", "its situación digit %s does not match situacion %s", "su dígito de situación %s no coincide con situacion %s")
	Terminal               = field("terminal_digits", "must be up to 5 digits", "debe tener hasta 5 dígitos")
	Situacion              = field("situacion_code", "must be 1 (normal), 2 (contingencia) or 3 (sin internet)", "debe ser 1 (normal), 2 (contingencia) o 3 (sin internet)")
	ActivityLength         = field("activity_code_length", "must be 6 characters", "debe tener 6 caracteres")
	ActivityRequiredFEC    = field("activity_required_fec", "is required in a Factura Electrónica de Compra (the company's activity)",
		"es obligatorio en una Factura Electrónica de Compra (la actividad de la compañía)")
	CondicionREP  = field("condicion_venta_rep", "a Recibo Electrónico de Pago takes only 09 or 11", "un Recibo Electrónico de Pago admite solo 09 u 11")
	CondicionType = field("condicion_venta_type", "is not a nota-5 code allowed in this document type", "no es un código de la nota 5 permitido en este tipo de documento")
	PlazoCredito  = field("plazo_credito_range", "must be a number of days between 1 and 99999", "debe ser un número de días entre 1 y 99999")
	PlazoRequired = field("plazo_credito_required", "is required with condicion_venta %s", "es obligatorio con condicion_venta %s")

	SellerRequired = field("seller_required", "the seller is required in a Factura Electrónica de Compra", "el vendedor es obligatorio en una Factura Electrónica de Compra")
	SellerIDLength = field("seller_identification_length",
		"the seller of a Factura Electrónica de Compra is the submission's emisor, which the tax authority's reception API takes with at most 12 characters",
		"el vendedor de una Factura Electrónica de Compra es el emisor del envío, que la API de recepción de Hacienda admite con 12 caracteres como máximo")
	ReceptorRequired       = field("receptor_required", "the receptor is required in this document type", "el receptor es obligatorio en este tipo de documento")
	CompanyNoID            = field("company_identification_missing", "the company has no identification", "la compañía no tiene identificación")
	CompanyAddressRequired = field("company_address_required", "the company's address is required in this document type", "la dirección de la compañía es obligatoria en este tipo de documento")
	CompanyEmailRequired   = field("company_email_required", "the company's e-mail address is required in this document type", "el correo electrónico de la compañía es obligatorio en este tipo de documento")
	CompanyEmailsMax       = field("company_email_too_many", "at most 4 addresses", "como máximo 4 direcciones")
	ProveedorLength        = field("proveedor_sistemas_length", "the software provider's identification has at most 20 characters",
		"la identificación del proveedor de sistemas tiene como máximo 20 caracteres")
	ForeignReceptorREP = field("receptor_foreign_rep", "a foreign non-domiciled receptor (05) is not allowed in a Recibo Electrónico de Pago",
		"un receptor extranjero no domiciliado (05) no se permite en un Recibo Electrónico de Pago")
	UbicacionForeign     = field("ubicacion_foreign", "is not allowed for a foreign non-domiciled party (05)", "no se permite para una parte extranjera no domiciliada (05)")
	UbicacionSeller      = field("ubicacion_required_seller", "is required for a seller with a Costa Rican identification", "es obligatoria para un vendedor con identificación costarricense")
	OtrasSenasExtranjero = field("otras_senas_extranjero_only_05", "is only allowed for a foreign non-domiciled party (identificacion tipo 05)",
		"solo se permite para una parte extranjera no domiciliada (identificacion tipo 05)")

	ReferenceExo11 = field("reference_required_exo11", "is required when an exoneration of type 11 is used", "es obligatoria cuando se usa una exoneración de tipo 11")
	LinesRequired  = field("lines_required", "at least one line is required in this document type", "se requiere al menos una línea en este tipo de documento")
	LinesOrCharges = field("lines_required_charges",
		"at least one line is required (a document without lines may only carry other charges of types 04, 08, 09, 10)",
		"se requiere al menos una línea (un documento sin líneas solo puede llevar otros cargos de los tipos 04, 08, 09, 10)")
	NumeroLinea        = field("numero_linea_order", "must be %d (lines are numbered in order from 1)", "debe ser %d (las líneas se numeran en orden desde 1)")
	UnidadMedida       = field("unidad_medida_unknown", "'%s' is not a nota-15 unit (symbols are case-sensitive)", "'%s' no es una unidad de la nota 15 (los símbolos distinguen mayúsculas de minúsculas)")
	TipoTransaccionTE  = field("tipo_transaccion_te", "is not used in a Tiquete Electrónico", "no se usa en un Tiquete Electrónico")
	TipoTransaccion    = field("tipo_transaccion_code", "must be a nota-22 code (01–13)", "debe ser un código de la nota 22 (01–13)")
	CodigosComerciales = field("codigo_comercial_too_many", "must have at most 5 codes", "debe tener como máximo 5 códigos")
	CodigoComercial    = field("codigo_comercial_tipo", "must be a nota-12 code (01–04, 99)", "debe ser un código de la nota 12 (01–04, 99)")
	NumerosVIN         = field("numero_vin_too_many", "must have at most 1000 numbers", "debe tener como máximo 1000 números")
	FormaFarmaceutica  = field("forma_farmaceutica_code", "must be a nota-19 pharmaceutical-form code", "debe ser un código de forma farmacéutica de la nota 19")
	ExportOnly         = field("export_only", "is only used in export invoices and their notes", "solo se usa en facturas de exportación y sus notas")
	PartidaRequired    = field("partida_arancelaria_required", "is required for goods in an export invoice", "es obligatoria para mercancías en una factura de exportación")
	TerceroRequired    = field("tercero_identification_required", "is required for a charge collected for a third party (04)",
		"es obligatoria para un cargo cobrado a favor de un tercero (04)")
	MedioPagoREP = field("medio_pago_required_rep", "at least one means of payment is required in a Recibo Electrónico de Pago",
		"se requiere al menos un medio de pago en un Recibo Electrónico de Pago")
	MedioPagoRequired = field("medio_pago_required", "is required except for credit sales (condicion_venta 02, 08, 10)",
		"es obligatorio excepto en ventas a crédito (condicion_venta 02, 08, 10)")
	NotAllowedREP       = field("not_allowed_rep", "is not allowed in a Recibo Electrónico de Pago", "no se permite en un Recibo Electrónico de Pago")
	ExoneracionTipo     = field("exoneracion_tipo_code", "must be a nota-10.1 code (01–11, 99)", "debe ser un código de la nota 10.1 (01–11, 99)")
	CodeNotesOnly       = field("code_notes_only", "code %s is only allowed in credit and debit notes", "el código %s solo se permite en notas de crédito y de débito")
	WholeNumber6        = field("whole_number_6_digits", "must be a whole number of at most 6 digits", "debe ser un número entero de 6 dígitos como máximo")
	ArticuloRequired    = field("articulo_required", "is required with exoneration type %s", "es obligatorio con el tipo de exoneración %s")
	InstitucionRequired = field("nombre_institucion_required", "is required (a nota-23 code)", "es obligatorio (un código de la nota 23)")
	Institucion         = field("nombre_institucion_code", "must be a nota-23 code (01–12, 99)", "debe ser un código de la nota 23 (01–12, 99)")
	ReferencesRequired  = field("references_required", "at least one reference is required in this document type", "se requiere al menos una referencia en este tipo de documento")
	ReferencesMax       = field("references_too_many", "must have at most 10 references", "debe tener como máximo 10 referencias")
	TipoDocIR           = field("tipo_doc_ir_code", "must be a nota-10 code (01–18, 99)", "debe ser un código de la nota 10 (01–18, 99)")
	TipoDocIR16         = field("tipo_doc_ir_16_fec_only", "code 16 is only allowed in a Factura Electrónica de Compra", "el código 16 solo se permite en una Factura Electrónica de Compra")
	TipoDocIRREP        = field("tipo_doc_ir_rep", "a Recibo Electrónico de Pago references only 01, 02, 03, 04, 07, 08 or 10", "un Recibo Electrónico de Pago solo referencia 01, 02, 03, 04, 07, 08 o 10")
	ReferenceClave      = field("reference_numero_clave", "must be the 50-digit clave of the referenced electronic document", "debe ser la clave de 50 dígitos del comprobante electrónico referido")
	ReferenceCodigo     = field("reference_codigo_code", "must be a nota-9 code (01, 02, 04–12, 99)", "debe ser un código de la nota 9 (01, 02, 04–12, 99)")
	ReferenceCodigo12   = field("reference_codigo_12_nc_only", "code 12 is only allowed in a credit note", "el código 12 solo se permite en una nota de crédito")
	Reference16Required = field("reference_16_required", "a purchase from a foreign non-domiciled seller needs a reference of type 16", "una compra a un vendedor extranjero no domiciliado requiere una referencia de tipo 16")
	Condicion13Required = field("condicion_venta_13_required", "a purchase from a non-taxpayer (identificacion 06) needs condicion_venta 13", "una compra a un no contribuyente (identificacion 06) requiere condicion_venta 13")
	ForeignReceptorFE   = field("receptor_foreign_fe", "a foreign non-domiciled receptor (05) in an FE needs condicion_venta 12 and a reference", "un receptor extranjero no domiciliado (05) en una FE requiere condicion_venta 12 y una referencia")
)

// The calculation's rules: amounts, discounts, taxes, exonerations, other
// charges, the currency and the payments.
var (
	LinesMax         = field("lines_too_many", "must have at most 1000 lines", "debe tener como máximo 1000 líneas")
	MaxDecimals      = field("max_decimals", "must have at most %d decimals", "debe tener como máximo %d decimales")
	MaxIntegerDigits = field("max_integer_digits", "must have at most %d integer digits", "debe tener como máximo %d dígitos enteros")
	ComputedTooLarge = field("computed_amount_too_large", "the computed amount exceeds 9999999999999.99999", "el monto calculado supera 9999999999999.99999")
	ComputedNegative = field("computed_amount_negative", "the computed amount is negative", "el monto calculado es negativo")
	CABYSDigits      = field("cabys_digits", "must be 13 digits", "debe tener 13 dígitos")
	Surtido          = field("surtido_not_supported", "packs (surtidos) are not supported", "los surtidos no se admiten")
	DiscountsMax     = field("discounts_too_many", "must have at most 5 discounts", "debe tener como máximo 5 descuentos")
	TaxRequired      = field("tax_required", "at least one tax is required (use rate code 10 for an exempt line)",
		"se requiere al menos un impuesto (use el código de tarifa 10 para una línea exenta)")
	IVACobradoFabrica = field("iva_cobrado_fabrica_code", "must be 01 or 02", "debe ser 01 o 02")
	CodigoDescuento   = field("codigo_descuento_code", "must be a nota-20 code (01–09, 99)", "debe ser un código de la nota 20 (01–09, 99)")
	RegaliaType       = field("regalia_not_expressible",
		"a regalía or bonificación borne by the issuer (01, 03) cannot be expressed in a %s: it has no ImpuestoAsumidoEmisorFabrica; use code 02 or an ordinary discount",
		"una regalía o bonificación a cargo del emisor (01, 03) no puede expresarse en una %s: no tiene ImpuestoAsumidoEmisorFabrica; use el código 02 o un descuento ordinario")
	Percentage       = field("percentage_range", "must be between 0 and 100", "debe estar entre 0 y 100")
	DiscountMismatch = field("monto_descuento_mismatch", "does not match porcentajeDescuento (expected %s)", "no coincide con porcentajeDescuento (se esperaba %s)")
	DiscountRequired = field("descuento_required", "montoDescuento or porcentajeDescuento is required", "se requiere montoDescuento o porcentajeDescuento")
	DiscountExceeds  = field("descuento_exceeds_line", "must not exceed the line's montoTotal (%s)", "no debe superar el montoTotal de la línea (%s)")
	DiscountsExceed  = field("descuentos_exceed_line", "the discounts add up to more than the line's montoTotal (%s)", "los descuentos suman más que el montoTotal de la línea (%s)")
	RegaliaWhole     = field("regalia_whole_line",
		"a regalía or bonificación (codigoDescuento 01 or 03) must discount the whole line; put the free units on a line of their own",
		"una regalía o bonificación (codigoDescuento 01 o 03) debe descontar la línea entera; ponga las unidades gratuitas en una línea aparte")
	TaxCodigo            = field("impuesto_codigo_code", "must be a nota-8 code (01–08, 12, 99)", "debe ser un código de la nota 8 (01–08, 12, 99)")
	OneIVA               = field("iva_one_per_line", "a line carries at most one IVA (codes 01, 07, 08)", "una línea lleva como máximo un IVA (códigos 01, 07, 08)")
	BaseImponible        = field("base_imponible_required", "is required and must be greater than 0 with iVACobradoFabrica 01", "es obligatoria y debe ser mayor que 0 con iVACobradoFabrica 01")
	RequiredWithTax      = field("required_with_tax_code", "is required with tax code %s", "es obligatorio con el código de impuesto %s")
	RequiredForTax       = field("required_for_tax_code", "is required for tax code %s", "es obligatorio para el código de impuesto %s")
	CodigoTarifaIVA      = field("codigo_tarifa_iva_code", "must be a nota-8.1 code (01–11)", "debe ser un código de la nota 8.1 (01–11)")
	TransitionalRate     = field("codigo_tarifa_iva_notes_only", "transitional rate code %s is only allowed in credit and debit notes", "el código de tarifa transitoria %s solo se permite en notas de crédito y de débito")
	TarifaMismatch       = field("tarifa_mismatch", "does not match codigoTarifaIVA %s (expected %s)", "no coincide con codigoTarifaIVA %s (se esperaba %s)")
	CodigoTarifaOnly     = field("codigo_tarifa_iva_only_01_07", "is only used with IVA codes 01 and 07", "solo se usa con los códigos de IVA 01 y 07")
	FactorOnly08         = field("factor_calculo_iva_only_08", "is only used with IVA code 08", "solo se usa con el código de IVA 08")
	SpecificTaxType      = field("specific_tax_not_allowed", "specific tax %s is not allowed in this document type", "el impuesto específico %s no se permite en este tipo de documento")
	TarifaPerUnit        = field("tarifa_per_unit_tax", "is not used with the per-unit tax code %s", "no se usa con el código de impuesto por unidad %s")
	DatosOnly            = field("datos_impuesto_especifico_only", "is only used with tax codes 03, 04, 05 and 06", "solo se usa con los códigos de impuesto 03, 04, 05 y 06")
	CementRate           = field("cement_tax_rate", "must be 5 for the cement tax (code 12)", "debe ser 5 para el impuesto al cemento (código 12)")
	AlcoholPercentage    = field("alcohol_percentage_required", "is required for tax code 04 (alcohol percentage)", "es obligatorio para el código de impuesto 04 (porcentaje de alcohol)")
	ProporcionTooLarge   = field("proporcion_too_large", "the computed proportion exceeds 3 integer digits", "la proporción calculada supera 3 dígitos enteros")
	VolumenRequired      = field("volumen_unidad_consumo_required", "is required and must be greater than 0 for tax code 05", "es obligatorio y debe ser mayor que 0 para el código de impuesto 05")
	Exempt02             = field("iva_cobrado_fabrica_exempt", "code 02 (exempt) needs an IVA of code 01 with rate code 10", "el código 02 (exento) requiere un IVA de código 01 con código de tarifa 10")
	Rate10With02         = field("codigo_tarifa_iva_exempt", "must be 10 (exempt) with iVACobradoFabrica 02", "debe ser 10 (exento) con iVACobradoFabrica 02")
	ExoPerUnit           = field("exoneracion_per_unit_tax", "a per-unit specific tax cannot be exonerated by rate", "un impuesto específico por unidad no puede exonerarse por tarifa")
	TarifaExoExceeds     = field("tarifa_exonerada_exceeds", "must not exceed the tax's tarifa (%s)", "no debe superar la tarifa del impuesto (%s)")
	TarifaForExoneration = field("tarifa_for_exoneration", "is required with an exoneration: tarifaExonerada is measured against it (or give codigoTarifaIVA)",
		"es obligatoria con una exoneración: la tarifaExonerada se mide contra ella (o indique codigoTarifaIVA)")
	REPTaxExtras = field("rep_tax_extras", "exoneracion and datosImpuestoEspecifico are not allowed in a Recibo Electrónico de Pago",
		"exoneracion y datosImpuestoEspecifico no se permiten en un Recibo Electrónico de Pago")
	CodigoTarifaIVARequired = field("codigo_tarifa_iva_required_code", "is required and must be a nota-8.1 code (01–11)", "es obligatorio y debe ser un código de la nota 8.1 (01–11)")
	CurrencyNota13          = field("currency_code_nota_13", "must be an ISO 4217 code of nota 13.1", "debe ser un código ISO 4217 de la nota 13.1")
	TipoCambioCRC           = field("tipo_cambio_crc", "must be 1 for CRC", "debe ser 1 para CRC")
	OtrosCargosMax          = field("otros_cargos_too_many", "must have at most 15 charges", "debe tener como máximo 15 cargos")
	TipoDocumentoOC         = field("tipo_documento_oc_code", "must be a nota-16 code (01–10, 99)", "debe ser un código de la nota 16 (01–10, 99)")
	MontoCargoMismatch      = field("monto_cargo_mismatch", "does not match porcentajeOC of %s (expected %s)", "no coincide con porcentajeOC de %s (se esperaba %s)")
	MontoCargoRequired      = field("monto_cargo_required", "montoCargo or porcentajeOC is required", "se requiere montoCargo o porcentajeOC")
	MediosPagoMax           = field("medios_pago_too_many", "must have at most 4 means of payment", "debe tener como máximo 4 medios de pago")
	TipoMedioPago           = field("tipo_medio_pago_code", "must be a nota-6 code (01–07, 99)", "debe ser un código de la nota 6 (01–07, 99)")
	TotalMedioPago          = field("total_medio_pago_mismatch", "must equal totalComprobante (%s)", "debe ser igual a totalComprobante (%s)")
	TotalMedioPagoZeroTotal = field("total_medio_pago_zero_total", "must be left out: the document's total is 0 and the tax authority refuses a payment amount of 0",
		"debe omitirse: el total del comprobante es 0 y Hacienda rechaza un monto de pago de 0")
	MediosPagoZeroTotal = field("medios_pago_zero_total", "a document whose total is 0 takes one means of payment, without totalMedioPago: the tax authority refuses a payment amount of 0",
		"un comprobante cuyo total es 0 lleva un solo medio de pago, sin totalMedioPago: Hacienda rechaza un monto de pago de 0")
	TotalMedioPagoRequired = field("total_medio_pago_required", "is required when there are several means of payment", "es obligatorio cuando hay varios medios de pago")
	MediosPagoSum          = field("medios_pago_sum_mismatch", "the totalMedioPago amounts add up to %s, not to totalComprobante (%s)",
		"los montos de totalMedioPago suman %s, no el totalComprobante (%s)")
)

// A clave or consecutivo: its structure, and its agreement with the
// document it numbers.
var (
	ClaveBranch        = field("clave_branch", "branch %q is not 3 digits", "la sucursal %q no tiene 3 dígitos")
	ClaveTerminal      = field("clave_terminal", "terminal %q is not 5 digits", "la terminal %q no tiene 5 dígitos")
	ClaveDocumentType  = field("clave_document_type", "document type %q is not one of 01 to 10", "el tipo de documento %q no es uno del 01 al 10")
	ClaveSequence      = field("clave_sequence", "sequence number %d is outside 1 to %d", "el número de secuencia %d está fuera del rango de 1 a %d")
	ConsecutivoDigits  = field("consecutivo_digits", "consecutivo must be %d digits", "el consecutivo debe tener %d dígitos")
	ClaveIssueTime     = field("clave_issue_time", "issue time is missing", "falta la hora de emisión")
	ClaveSituacion     = field("clave_situacion", "situacion %q is not 1, 2 or 3", "la situación %q no es 1, 2 ni 3")
	ClaveYear          = field("clave_year", "issue year %d cannot be written with two digits", "el año de emisión %d no puede escribirse con dos dígitos")
	ClaveLength        = field("clave_length", "clave must be %d digits", "la clave debe tener %d dígitos")
	ClaveCountry       = field("clave_country", "clave does not start with country code 506", "la clave no empieza con el código de país 506")
	ClaveDate          = field("clave_date", "clave date %s/%s/%s is not a calendar date", "la fecha %s/%s/%s de la clave no es una fecha del calendario")
	ClaveSituacionPart = field("clave_situacion_digit", "clave situacion %q is not 1, 2 or 3", "la situación %q de la clave no es 1, 2 ni 3")
	ClaveIssuerID      = field("clave_issuer_id", "issuer id %q is not 1 to 12 digits", "la identificación del emisor %q no tiene de 1 a 12 dígitos")

	ClaveIssuerDiffers    = field("clave_issuer_differs", "the clave's issuer id %s is not the issuer's identification %s", "la identificación de emisor %s de la clave no es la identificación del emisor, %s")
	ClaveBranchDiffers    = field("clave_branch_differs", "the clave's branch %s is not the branch %s", "la sucursal %s de la clave no es la sucursal %s")
	ClaveTerminalDiffers  = field("clave_terminal_differs", "the clave's terminal %s is not the terminal %s", "la terminal %s de la clave no es la terminal %s")
	ClaveTypeDiffers      = field("clave_document_type_differs", "the clave's document type %s is not the document type %s", "el tipo de documento %s de la clave no es el tipo de documento %s")
	ClaveSituacionDiffers = field("clave_situacion_differs", "the clave's situacion %s is not the situacion %s", "la situación %s de la clave no es la situación %s")
	ClaveDateDiffers      = field("clave_date_differs", "the clave's date %s is not the issue date %s (Costa Rica time)", "la fecha %s de la clave no es la fecha de emisión %s (hora de Costa Rica)")

	FechaAhead = field("fecha_emision_ahead",
		"is %s after the time the service received the document; at most %s ahead is accepted (clock difference), as the tax authority rejects a document issued later than its reception",
		"es %s posterior a la hora en que el servicio recibió el documento; se acepta como máximo %s de adelanto (diferencia de relojes), pues Hacienda rechaza un documento emitido después de su recepción")
	FechaOldOffline = field("fecha_emision_too_old_offline",
		"is %s before the time the service received the document; a document generated without internet (situacion 3) is accepted up to %s old",
		"es %s anterior a la hora en que el servicio recibió el documento; un documento generado sin internet (situacion 3) se acepta con hasta %s de antigüedad")
	FechaOld = field("fecha_emision_too_old",
		"is %s before the time the service received the document; with situacion %s at most %s is accepted (the tax authority accepts an earlier date only for situacion 3, sin internet)",
		"es %s anterior a la hora en que el servicio recibió el documento; con situacion %s se acepta como máximo %s (Hacienda acepta una fecha anterior solo con situacion 3, sin internet)")
)

// A received document and the receiver's message (A.11).
var (
	ReceivedXMLRequired = field("received_xml_required", "is required: the supplier's signed XML, in base64", "es obligatorio: el XML firmado del proveedor, en base64")
	ReceivedXMLBase64   = field("received_xml_base64", "is not base64: send the supplier's signed XML encoded in base64", "no es base64: envíe el XML firmado del proveedor codificado en base64")
	MensajeCode         = field("mensaje_code", "must be 1 (accepted), 2 (partially accepted) or 3 (rejected)", "debe ser 1 (aceptado), 2 (aceptado parcialmente) o 3 (rechazado)")
	JSONTypeOf          = field("json_type", "has the wrong JSON type (%s)", "tiene un tipo JSON equivocado (%s)")
	ReceivedBody        = field("received_body_object", "must be a JSON object with the fields of a received document", "debe ser un objeto JSON con los campos de un documento recibido")

	NotAnswerableType = field("not_answerable_type", "document type %q is not answered with a receiver's message", "el tipo de documento %q no se responde con un mensaje de receptor")
	NotAnswerableTE   = field("not_answerable_te",
		"a Tiquete Electrónico (04) cannot be answered with a receiver's message: it does not identify its buyer for a tax credit; only %s are answered",
		"un Tiquete Electrónico (04) no puede responderse con un mensaje de receptor: no identifica a su comprador para un crédito fiscal; solo se responden %s")
	NotAnswerableBuyer = field("not_answerable_buyer_issued",
		"a %s (%s) is issued by its buyer and is not answered with a receiver's message; only %s are answered",
		"el comprobante %s (%s) lo emite su comprador y no se responde con un mensaje de receptor; solo se responden %s")

	SupplierDocMissing = field("supplier_document_missing", "The supplier's document is missing.", "Falta el documento del proveedor.")
	SupplierClave      = field("supplier_clave_digits", "The document's Clave is not 50 digits.", "La Clave del documento no tiene 50 dígitos.")
	SupplierEmisorID   = field("supplier_emisor_identification", "The document's Emisor must be identified by 9 to 12 digits to be answered.",
		"El Emisor del documento debe estar identificado con 9 a 12 dígitos para poder responderlo.")
	SupplierNoReceptor = field("supplier_receptor_missing", "The document has no identified Receptor, so no receiver can answer it.",
		"El documento no tiene un Receptor identificado, así que ningún receptor puede responderlo.")
	SupplierReceptorID = field("supplier_receptor_identification", "The document's Receptor must be identified by 9 to 12 digits to answer it.",
		"El Receptor del documento debe estar identificado con 9 a 12 dígitos para responderlo.")
	SupplierNoTotal = field("supplier_total_missing", "The document has no TotalComprobante.", "El documento no tiene TotalComprobante.")
	MensajeRequired = field("mensaje_required", "The mensaje is required: 1 accepted, 2 partially accepted, 3 rejected.",
		"El mensaje es obligatorio: 1 aceptado, 2 aceptado parcialmente, 3 rechazado.")
	MensajeValue = field("mensaje_value", "The mensaje must be 1 (accepted), 2 (partially accepted) or 3 (rejected).",
		"El mensaje debe ser 1 (aceptado), 2 (aceptado parcialmente) o 3 (rechazado).")
	DetalleRequired = field("detalle_mensaje_required", "The detalleMensaje is required when the document is partially accepted or rejected: say why.",
		"El detalleMensaje es obligatorio cuando el documento se acepta parcialmente o se rechaza: indique el motivo.")
	DetalleMin        = field("detalle_mensaje_too_short", "The detalleMensaje must have at least %d characters.", "El detalleMensaje debe tener al menos %d caracteres.")
	DetalleMax        = field("detalle_mensaje_too_long", "The detalleMensaje must have at most %d characters.", "El detalleMensaje debe tener como máximo %d caracteres.")
	CondicionImpuesto = field("condicion_impuesto_code", "The condicionImpuesto must be one of 01, 02, 03, 04, 05.", "La condicionImpuesto debe ser una de 01, 02, 03, 04, 05.")
	ActividadReceptor = field("codigo_actividad_format", "The codigoActividad must be an economic activity code of at most 6 characters.",
		"El codigoActividad debe ser un código de actividad económica de 6 caracteres como máximo.")
	ActividadWith05 = field("codigo_actividad_with_05", "The codigoActividad is not given with condicionImpuesto 05 (proportionality).",
		"El codigoActividad no se indica con condicionImpuesto 05 (proporcionalidad).")
	CreditOnRejected = field("credit_on_rejected", "No tax credit is taken on a rejected document (mensaje 3).", "No se toma crédito fiscal de un documento rechazado (mensaje 3).")
	AcreditarWith05  = field("acreditar_with_05", "The montoTotalImpuestoAcreditar is not given with condicionImpuesto 05 (proportionality).",
		"El montoTotalImpuestoAcreditar no se indica con condicionImpuesto 05 (proporcionalidad).")
	AcreditarWith04 = field("acreditar_with_04", "With condicionImpuesto 04 (current expense, no credit) no tax is credited.",
		"Con condicionImpuesto 04 (gasto corriente, sin crédito) no se acredita impuesto.")
	AcreditarExceeds = field("acreditar_exceeds_tax", "The montoTotalImpuestoAcreditar (%s) exceeds the document's MontoTotalImpuesto (%s).",
		"El montoTotalImpuestoAcreditar (%s) supera el MontoTotalImpuesto del documento (%s).")
	AcreditarFull = field("acreditar_full_credit", "With condicionImpuesto 01 (full credit) the montoTotalImpuestoAcreditar must be the document's MontoTotalImpuesto (%s).",
		"Con condicionImpuesto 01 (crédito total) el montoTotalImpuestoAcreditar debe ser el MontoTotalImpuesto del documento (%s).")
	AcreditarPartial = field("acreditar_partial_credit", "With condicionImpuesto 02 (partial credit) the montoTotalImpuestoAcreditar must be less than the document's MontoTotalImpuesto (%s).",
		"Con condicionImpuesto 02 (crédito parcial) el montoTotalImpuestoAcreditar debe ser menor que el MontoTotalImpuesto del documento (%s).")
	AcreditarRequired = field("acreditar_required", "The montoTotalImpuestoAcreditar is required with condicionImpuesto 02 (partial credit).",
		"El montoTotalImpuestoAcreditar es obligatorio con condicionImpuesto 02 (crédito parcial).")
	GastoOnRejected = field("gasto_on_rejected", "No expense is applied from a rejected document (mensaje 3).", "No se aplica gasto de un documento rechazado (mensaje 3).")
	GastoWith05     = field("gasto_with_05", "The montoTotalDeGastoAplicable is not given with condicionImpuesto 05 (proportionality).",
		"El montoTotalDeGastoAplicable no se indica con condicionImpuesto 05 (proporcionalidad).")
	GastoExceeds = field("gasto_exceeds_total", "The montoTotalDeGastoAplicable (%s) exceeds the document's TotalComprobante (%s).",
		"El montoTotalDeGastoAplicable (%s) supera el TotalComprobante del documento (%s).")
	AnswerAmountDecimal  = field("answer_amount_not_decimal", "The %s must be a decimal number.", "El %s debe ser un número decimal.")
	AnswerAmountNegative = field("answer_amount_negative", "The %s must not be negative.", "El %s no debe ser negativo.")
	AnswerAmountDigits   = field("answer_amount_digits", "The %s must have at most 13 integer digits and 5 decimals.", "El %s debe tener como máximo 13 dígitos enteros y 5 decimales.")

	// ListAnd joins the last two items of a list: "FE, ND, NC and FEE".
	ListAnd = part("list_and", "%s and %s", "%s y %s")
)
