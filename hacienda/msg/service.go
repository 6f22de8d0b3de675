package msg

// The pipeline's checks of a send, a receive and the derived documents
// (void, re-issue, payment receipt), against what is stored.
var (
	RequestRequired     = field("body_required", "a request is required", "se requiere una solicitud")
	SendRequestRequired = field("send_request_required", "a send request is required", "se requiere una solicitud de envío")
	ReceivedRequired    = field("received_required", "a received document is required", "se requiere un documento recibido")
	JSONObject          = field("body_json_object", "must be a JSON object", "debe ser un objeto JSON")
	NamedTwice          = field("field_named_twice", "names a field the body names again in another case; give it once",
		"nombra un campo que el cuerpo vuelve a nombrar con otras mayúsculas o minúsculas; indíquelo una sola vez")
	IDExternoRequired = field("id_externo_required", "is required: it makes the call safe to repeat", "es obligatorio: permite repetir la llamada sin riesgo")
	IDExternoReused   = field("id_externo_reused", "was already used in this branch for another document", "ya se usó en esta sucursal para otro comprobante")
	// IDExternoUsed and IDExternoOtherEnv take a What part.
	IDExternoUsed = field("id_externo_used", "was already used in this branch for another %s; send a new id_externo, or the same request to get its answer again",
		"ya se usó en esta sucursal para otro %s; envíe un id_externo nuevo, o la misma solicitud para obtener de nuevo su respuesta")
	IDExternoOtherEnv = field("id_externo_other_environment", "was used in this branch for a %s of %s, before the company moved to %s; send a new id_externo",
		"se usó en esta sucursal para un %s de %s, antes de que la compañía pasara a %s; envíe un id_externo nuevo")
	WhatDocument = part("what_document", "document", "comprobante")
	WhatReceived = part("what_received_document", "received document", "comprobante recibido")
	WhatMessage  = part("what_message", "message", "mensaje")

	FEOff = field("facturacion_electronica_off",
		"is off for this company: turn it on (with the tax-authority user, password and certificate) before sending documents; nothing was numbered",
		"está desactivada para esta compañía: actívela (con el usuario, la contraseña y el certificado de Hacienda) antes de enviar comprobantes; no se numeró nada")
	NoHaciendaUser = field("usuario_hacienda_missing",
		"the company has no tax-authority user: set UsuarioHacienda and ContrasenaHacienda before sending documents; nothing was numbered",
		"la compañía no tiene usuario de Hacienda: configure UsuarioHacienda y ContrasenaHacienda antes de enviar comprobantes; no se numeró nada")
	NoHaciendaPassword = field("contrasena_hacienda_missing",
		"the company has no tax-authority password: set ContrasenaHacienda before sending documents; nothing was numbered",
		"la compañía no tiene contraseña de Hacienda: configure ContrasenaHacienda antes de enviar comprobantes; no se numeró nada")
	FechaYears       = field("fecha_emision_years", "must be a date between the years 2000 and 2099", "debe ser una fecha entre los años 2000 y 2099")
	ClaveInUse       = field("clave_in_use", "is already used by another document", "ya la usa otro comprobante")
	ConsecutivoInUse = field("consecutivo_in_use", "its consecutivo %s is already used by another document of this branch", "su consecutivo %s ya lo usa otro comprobante de esta sucursal")

	NotRebuildable = field("document_not_rebuildable", "the document has no stored request or signed XML to build from",
		"el comprobante no tiene una solicitud guardada ni un XML firmado a partir del cual construirlo")
	VoidType = field("void_type", "a document of type %s cannot be voided by a credit note of this call (only FE 01, ND 02 and TE 04)",
		"un comprobante de tipo %s no puede anularse con una nota de crédito de esta llamada (solo FE 01, ND 02 y TE 04)")
	VoidState = field("void_state", "only a document the tax authority accepted (estado 01) can be voided; this one is %s",
		"solo puede anularse un comprobante que Hacienda aceptó (estado 01); este está en %s")
	RazonRequired     = field("razon_required", "is required: 3 to 180 characters", "es obligatoria: de 3 a 180 caracteres")
	CreditedMeanwhile = field("credited_meanwhile", "the document was credited meanwhile; send the void again with a new id_externo",
		"el comprobante recibió un crédito mientras tanto; envíe la anulación de nuevo con un id_externo nuevo")
	LineOverCredit    = field("line_over_credit", "is more than what remains uncredited of line %d", "es más de lo que queda sin acreditar de la línea %d")
	LineOverCreditQty = field("line_over_credit_quantity", "is more than what remains uncredited of line %d (%s)", "es más de lo que queda sin acreditar de la línea %d (%s)")
	FullyCredited     = field("fully_credited", "the document is already fully credited", "el comprobante ya está acreditado por completo")
	LineUnknown       = field("line_unknown", "the document has no line %d", "el comprobante no tiene la línea %d")
	LineTwice         = field("line_named_twice", "line %d is named twice", "la línea %d se indica dos veces")
	CreditQuantity    = field("credit_quantity", "must be a quantity greater than 0 with up to 3 decimals", "debe ser una cantidad mayor que 0 con hasta 3 decimales")
	ReissueState      = field("reissue_state", "only a document the tax authority rejected (estado 02) can be re-issued; this one is %s",
		"solo puede reemitirse un comprobante que Hacienda rechazó (estado 02); este está en %s")
	ReissueCreditNote = field("reissue_credit_note",
		"a rejected credit note is not re-issued: void the document it credited again with POST /api/documents/{clave}/anular/v4 (the rejection freed what it credited), or send a new credit note",
		"una nota de crédito rechazada no se reemite: anule de nuevo el comprobante que acreditaba con POST /api/documents/{clave}/anular/v4 (el rechazo liberó lo que acreditaba), o envíe una nota de crédito nueva")
	ReissuePayment = field("reissue_payment_receipt",
		"a rejected payment receipt is not re-issued: pay the document again with POST /api/documents/{clave}/recibo-pago/v4 (the rejection freed its amount), or send a new receipt",
		"un recibo de pago rechazado no se reemite: pague el comprobante de nuevo con POST /api/documents/{clave}/recibo-pago/v4 (el rechazo liberó su monto), o envíe un recibo nuevo")
	ReissueClave     = field("reissue_clave", "a re-issued document is numbered anew: leave clave out of the body", "un comprobante reemitido se numera de nuevo: no incluya clave en el cuerpo")
	PaymentCondicion = field("payment_condicion_venta", "the document's CondicionVenta is %s: only a sale with 08 or 10 is paid by a payment receipt (REP)",
		"la CondicionVenta del comprobante es %s: solo una venta con 08 o 10 se paga con un recibo electrónico de pago (REP)")
	PaymentType  = field("payment_type", "a document of type %s cannot be paid by a payment receipt of this call", "un comprobante de tipo %s no puede pagarse con un recibo de pago de esta llamada")
	PaymentState = field("payment_state", "only a document the tax authority accepted (estado 01) can be paid; this one is %s",
		"solo puede pagarse un comprobante que Hacienda aceptó (estado 01); este está en %s")
	PaymentAmount      = field("payment_amount", "must be an amount greater than 0 with up to 5 decimals", "debe ser un monto mayor que 0 con hasta 5 decimales")
	PaymentMedio       = field("payment_medio_pago", "must be a TipoMedioPago code 01 to 07", "debe ser un código de TipoMedioPago del 01 al 07")
	PaymentFuture      = field("payment_future", "a payment cannot be dated in the future", "un pago no puede tener fecha futura")
	PaymentNothing     = field("payment_nothing_to_pay", "the document has no amount to pay", "el comprobante no tiene monto por pagar")
	PaymentOverBalance = field("payment_over_balance", "is more than the balance of the document (%s)", "es más que el saldo del comprobante (%s)")
	BalanceChanged     = field("payment_balance_changed", "the balance changed meanwhile; send the payment again with a new id_externo",
		"el saldo cambió mientras tanto; envíe el pago de nuevo con un id_externo nuevo")
	PaymentBienesUsados = field("payment_bienes_usados",
		"a document with tax code 08 (bienes usados) cannot be paid by this call: its tax is a factor, not a rate",
		"un comprobante con código de impuesto 08 (bienes usados) no puede pagarse con esta llamada: su impuesto es un factor, no una tarifa")

	// The supplier's document a receiver answers (A.11). The %s at the
	// end of some is the parser's or the verifier's own detail.
	SupplierNotV44    = field("supplier_not_v44", "is not a v4.4 electronic document (FE, ND, NC or FEE): %s", "no es un comprobante electrónico v4.4 (FE, ND, NC o FEE): %s")
	SupplierSignature = field("supplier_signature_invalid",
		"the supplier's signature does not verify (the document was altered after it was signed, or its signature is malformed): %s",
		"la firma del proveedor no se verifica (el documento se alteró después de firmarse, o su firma está mal formada): %s")
	SupplierCertNoID = field("supplier_certificate_no_identification",
		"the supplier's signing certificate carries no identification, so it cannot be told to be the Emisor's: %s",
		"el certificado de firma del proveedor no lleva identificación, así que no se puede saber si es del Emisor: %s")
	SupplierSignedByOther = field("supplier_signed_by_other", "the document is signed with the certificate of %s, not of its Emisor %s",
		"el documento está firmado con el certificado de %s, no con el de su Emisor %s")
	SupplierChain = field("supplier_certificate_chain",
		"the supplier's certificate names an authority of the national PKI as its issuer but does not chain to it at its signing time: %s",
		"el certificado del proveedor nombra como emisor a una autoridad de la PKI nacional pero no se encadena con ella en el momento de la firma: %s")
	SupplierNotAddressed = field("supplier_not_addressed", "the document names no Receptor, so it is not addressed to this company",
		"el documento no nombra Receptor, así que no está dirigido a esta compañía")
	SupplierOtherReceptor = field("supplier_other_receptor", "the document is addressed to %s, not to this company (%s): only the receptor answers it",
		"el documento está dirigido a %s, no a esta compañía (%s): solo el receptor lo responde")
	// AlreadyAnswered takes "" or an AnsweredBy part.
	AlreadyAnswered = field("already_answered", "this document was already answered by this company%s; the tax authority takes one answer per document and receiver",
		"esta compañía ya respondió este documento%s; Hacienda admite una respuesta por documento y receptor")
	AnsweredBy          = part("answered_by", " (message %s, mensaje %s)", " (mensaje de receptor %s, mensaje %s)")
	SupplierCredentials = field("supplier_check_credentials",
		"the tax authority refused the company's user or password when asked about the supplier's document: correct UsuarioHacienda and ContrasenaHacienda; nothing was numbered",
		"Hacienda rechazó el usuario o la contraseña de la compañía al consultar el documento del proveedor: corrija UsuarioHacienda y ContrasenaHacienda; no se numeró nada")
	SupplierUnknown = field("supplier_document_unknown",
		"the tax authority does not know this document (clave %s): the supplier has not sent it or it was not received, and only a document the tax authority accepted can be answered",
		"Hacienda no conoce este documento (clave %s): el proveedor no lo ha enviado o no se recibió, y solo puede responderse un documento que Hacienda aceptó")
	SupplierRejected = field("supplier_document_rejected",
		"the tax authority rejected this document (clave %s); only a document it accepted can be answered, ask the supplier for a new one",
		"Hacienda rechazó este documento (clave %s); solo puede responderse un documento que aceptó: pida uno nuevo al proveedor")
	SupplierPending = field("supplier_document_pending", "the tax authority has not judged this document yet (ind-estado %s); answer it once it is accepted",
		"Hacienda aún no ha resuelto este documento (ind-estado %s); respóndalo cuando esté aceptado")
)
