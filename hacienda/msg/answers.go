package msg

// The top-level messages of the error answers: each code is the "code" of
// an error body (A.7), of the severe 500 body, or of the mensajeApiKey /
// mensaje_api_key of an A.6 call's 500.
const (
	these = "among the records these credentials can reach"
	estas = "entre los registros a los que tienen acceso estas credenciales"
)

// 400.
var (
	ValidationFailed = answer("validation_failed", 400,
		"One or more validation errors occurred.",
		"Se produjeron uno o más errores de validación.",
		"A request field, the body, or a query or path parameter is wrong: errors names each by its path with its messages, codes gives the code of each message.")
	RequestUnreadable = answer("request_unreadable", 400,
		"The request could not be read.",
		"No se pudo leer la solicitud.",
		"The HTTP request itself is malformed.")
	HeadersUnreadable = answer("headers_unreadable", 400,
		"The request headers could not be read.",
		"No se pudieron leer los encabezados de la solicitud.",
		"A header line has no ':' (a value broken over several lines); errors names the header.")
)

// 401, 402.
var (
	// Unauthenticated takes "" or one of the Auth* parts.
	Unauthenticated = answer("unauthenticated", 401,
		"Missing or invalid credentials: send AuthToken and Authorization: Basic of one API user.%s",
		"Credenciales ausentes o no válidas: envíe AuthToken y Authorization: Basic de un mismo usuario de API.%s",
		"The AuthToken or Authorization header is missing or malformed (the message says which), or the pair belongs to no active API user.")
	AuthNoToken  = part("auth_no_token", " The AuthToken header is missing.", " Falta el encabezado AuthToken.")
	AuthNoAuth   = part("auth_no_authorization", " The Authorization header is missing.", " Falta el encabezado Authorization.")
	AuthNotBasic = part("auth_not_basic", " The Authorization header is not of the Basic scheme: send Authorization: Basic base64(usuario:contrasena).",
		" El encabezado Authorization no es del esquema Basic: envíe Authorization: Basic base64(usuario:contrasena).")
	AuthEmptyBasic = part("auth_empty_basic", " The Authorization header has nothing after Basic: send base64(usuario:contrasena).",
		" El encabezado Authorization no tiene nada después de Basic: envíe base64(usuario:contrasena).")
	AuthWrapped = part("auth_wrapped", " The Authorization header's Basic value is broken over several lines: encode usuario:contrasena on one line (base64 -w0, or curl -u usuario:contrasena).",
		" El valor Basic del encabezado Authorization está partido en varias líneas: codifique usuario:contrasena en una sola línea (base64 -w0, o curl -u usuario:contrasena).")
	AuthNotBase64 = part("auth_not_base64", " The Authorization header's Basic value is not base64 of usuario:contrasena.",
		" El valor Basic del encabezado Authorization no es base64 de usuario:contrasena.")
	AuthNoColon = part("auth_no_colon", " The Authorization header's Basic value decodes to no usuario:contrasena pair (no ':').",
		" El valor Basic del encabezado Authorization no se decodifica como un par usuario:contrasena (no tiene ':').")
	AuthEmptyUser = part("auth_empty_usuario", " The Authorization header's Basic value has an empty usuario.",
		" El valor Basic del encabezado Authorization tiene el usuario vacío.")
	AuthEmptyPassword = part("auth_empty_contrasena", " The Authorization header's Basic value has an empty contrasena.",
		" El valor Basic del encabezado Authorization tiene la contraseña vacía.")

	QuotaExhausted = answer("quota_exhausted", 402,
		"The company has numbered its monthly quota of documents: nothing was numbered.",
		"La compañía agotó su cuota mensual de comprobantes: no se numeró ninguno.",
		"A send past the company's monthly quota (A.14); errors.cuotaMensual says how many were numbered in which month.")
)

// 404: what was not found, named as the caller named it. A record of
// another tenant is answered exactly as one that does not exist.
var (
	RouteNotFound = answer("route_not_found", 404, "No such resource.", "No existe ese recurso.",
		"No route has this path (check the method, the /api prefix and the /v4 suffix).")
	NotFound = answer("not_found", 404,
		"Nothing was found for this request "+these+".",
		"No se encontró nada para esta solicitud "+estas+".",
		"What the call names does not exist or is another tenant's, and the call names no record of its own (a send by a principal that issues no documents, for instance).")
	CompanyNotFound = answer("company_not_found", 404,
		"Company %s was not found "+these+".",
		"No se encontró la compañía %s "+estas+".",
		"The company of the path (or of companiaId) does not exist or the credentials cannot reach it.")
	BranchNotFound = answer("branch_not_found", 404,
		"Branch %[2]s of company %[1]s was not found "+these+".",
		"No se encontró la sucursal %[2]s de la compañía %[1]s "+estas+".",
		"The branch of the path does not exist in that company, or the company does not exist or the credentials cannot reach it.")
	APIUserNotFound = answer("api_user_not_found", 404,
		"API user %[3]s of branch %[2]s of company %[1]s was not found "+these+".",
		"No se encontró el usuario de API %[3]s de la sucursal %[2]s de la compañía %[1]s "+estas+".",
		"The API user of the path does not exist in that branch, or the branch or the company does not exist or cannot be reached.")
	WebhookNotFound = answer("webhook_not_found", 404,
		"Webhook %[2]s of company %[1]s was not found "+these+".",
		"No se encontró el webhook %[2]s de la compañía %[1]s "+estas+".",
		"The webhook of the path does not exist in that company, or the company cannot be reached.")
	DocumentNotFound = answer("document_not_found", 404,
		"No document with clave %s was found "+these+".",
		"No se encontró ningún comprobante con clave %s "+estas+".",
		"No issued document has the clave of the path, or it is another company's.")
	ReceivedNotFound = answer("received_document_not_found", 404,
		"No received document with clave %s was found "+these+".",
		"No se encontró ningún comprobante recibido con clave %s "+estas+".",
		"The company has received no supplier's document with the clave of the path.")
	// XMLNotYet takes the clave and one of the XML* parts.
	XMLNotYet = answer("xml_not_available", 404,
		"The document with clave %s has no %s yet.",
		"El comprobante con clave %s aún no tiene %s.",
		"The document exists but the XML asked for does not yet (the tax authority's answer before its verdict, for instance).")
	XMLSigned   = part("xml_signed", "signed XML", "XML firmado")
	XMLResponse = part("xml_response", "answer XML of the tax authority", "XML de respuesta de Hacienda")
	XMLMessage  = part("xml_message", "receiver's message XML", "XML de mensaje de receptor")
	XMLSupplier = part("xml_supplier", "supplier's XML", "XML del proveedor")

	TaxpayerNotFound = answer("taxpayer_not_found", 404,
		"The taxpayer registry has no identification %s.",
		"El registro de contribuyentes no tiene la identificación %s.",
		"The tax authority's taxpayer registry does not know the identification.")
	TaxpayerNotRegistered = answer("taxpayer_not_registered", 404,
		"Not registered: the taxpayer registry has %s as %q.",
		"No inscrito: el registro de contribuyentes tiene a %s como %q.",
		"The registry knows the identification but it is not registered (its standing is quoted).")
	ExoneracionNotFound = answer("exoneration_not_found", 404,
		"The exoneration registry has no authorisation %s.",
		"El registro de exoneraciones no tiene la autorización %s.",
		"The tax authority's exoneration registry does not know the authorisation.")
	CabysNotFound = answer("cabys_not_found", 404,
		"The CAByS catalogue has nothing for %s.",
		"El catálogo CAByS no tiene nada para %s.",
		"The CAByS catalogue had nothing for the question.")
	RateNotFound = answer("exchange_rate_not_found", 404,
		"The central bank has no %s exchange rate for %s.",
		"El Banco Central no tiene tipo de cambio de %s para %s.",
		"The central bank publishes no rate of that currency for that day.")
)

// 405, 408, 409, 413, 431.
var (
	MethodNotAllowed = answer("method_not_allowed", 405, "Method not allowed on this resource.", "Método no permitido en este recurso.",
		"The path exists but not with this method.")
	RequestTimeout = answer("request_timeout", 408, "The request was not received in time.", "La solicitud no se recibió a tiempo.",
		"The client sent its request too slowly.")
	NotSigned = answer("document_not_signed", 409,
		"The document has no signed XML yet (estado 00), so it has no printed representation: it gets one once it is signed, for instance after a valid certificate is uploaded.",
		"El comprobante aún no tiene XML firmado (estado 00), así que no tiene representación impresa: la tendrá cuando se firme, por ejemplo después de subir un certificado válido.",
		"The PDF of a document not signed yet.")
	IVAIncomplete = answer("iva_incomplete", 409,
		"The IVA summary of %s cannot be complete: %d document(s) of the month have no stored tax breakdown and their XML cannot be read from the store: %s%s. The summary is refused rather than answered without them; report these claves to the operator.",
		"El resumen de IVA de %s no puede estar completo: %d comprobante(s) del mes no tienen desglose de impuestos guardado y su XML no puede leerse del almacén: %s%s. El resumen se rechaza en lugar de darse sin ellos; informe estas claves al operador.",
		"The month's IVA summary lacks documents whose tax breakdown cannot be read (decision 112).")
	// AndMore takes how many more there are.
	AndMore = part("and_more", " and %d more", " y %d más")

	BodyTooLarge = answer("body_too_large", 413, "The request body is too large.", "El cuerpo de la solicitud es demasiado grande.",
		"The body is over the route's limit.")
	HeadersTooLarge = answer("headers_too_large", 431, "The request headers are too large.", "Los encabezados de la solicitud son demasiado grandes.",
		"The headers are over the read buffer (4 KiB).")
)

// 429 and 503: try again later, after Retry-After.
var (
	TooManyRequests = answer("too_many_requests", 429,
		"Too many requests; try again after the time Retry-After gives.",
		"Demasiadas solicitudes; intente de nuevo después del tiempo que indica Retry-After.",
		"A limit of the service refused the call; the message says which.")
	Unavailable = answer("unavailable", 503,
		"The service cannot take this call now; try again after the time Retry-After gives.",
		"El servicio no puede atender esta llamada ahora; intente de nuevo después del tiempo que indica Retry-After.",
		"The service cannot take the call now; the message says why.")
	AuthThrottled = answer("auth_throttled", 429,
		"Too many failed authentication attempts; try again later.",
		"Demasiados intentos de autenticación fallidos; intente de nuevo más tarde.",
		"Failed authentications from this client or for this user came too fast (decision 48).")
	PDFCompanyBusy = answer("pdf_company_busy", 429,
		"This company's PDFs are being drawn as many at once as the service allows; try again shortly.",
		"Se están dibujando tantos PDF de esta compañía a la vez como el servicio permite; intente de nuevo en un momento.",
		"The company has as many PDFs being drawn as it may.")
	ExportRunning = answer("export_running", 429,
		"An export of this company is already running; wait for it to end and try again.",
		"Ya hay una exportación de esta compañía en curso; espere a que termine e intente de nuevo.",
		"The company has an export running.")

	StoreUnavailable = answer("store_unavailable", 503,
		"The service cannot complete this call right now: its data store is unavailable or did not answer in time. Send the same request again shortly.",
		"El servicio no puede completar esta llamada ahora: su almacén de datos no está disponible o no respondió a tiempo. Envíe la misma solicitud de nuevo en un momento.",
		"The data store is unreachable or slow, or the call's own deadline ran out; nothing was changed.")
	ArchiveUnavailable = answer("archive_unavailable", 503,
		"The archived copy of document %s cannot be read now; try again later.",
		"La copia archivada del comprobante %s no puede leerse ahora; intente de nuevo más tarde.",
		"Only the archive holds the XML asked for and it cannot be read now (A.15).")
	RegistryUnavailable = answer("registry_unavailable", 503,
		"The tax authority's registry cannot be reached and nothing is cached for this question; try again later.",
		"No se puede consultar el registro de Hacienda y no hay nada guardado para esta consulta; intente de nuevo más tarde.",
		"A registry lookup (A.13) that cannot be answered now.")
	// NotReady takes the names of the checks that failed.
	NotReady = answer("not_ready", 503,
		"Not ready: %s down.",
		"No está listo: %s sin servicio.",
		"/readyz: a check the service cannot do without failed; the message names it.")
	Stopping = answer("service_stopping", 503,
		"The service is stopping; try again.",
		"El servicio se está deteniendo; intente de nuevo.",
		"The replica is shutting down; another one (or this one, restarted) takes the call.")
	// InProgress takes a What part.
	InProgress = answer("id_externo_in_progress", 503,
		"A %s with this id_externo is being sent right now; ask again shortly for its answer.",
		"Un %s con este id_externo se está enviando en este momento; pida su respuesta de nuevo en un momento.",
		"Another call with the same id_externo is working on it; repeat the request for its answer.")
	StoredMeanwhile = answer("id_externo_stored_meanwhile", 503,
		"A message with this id_externo was stored meanwhile; ask again for its answer.",
		"Se guardó mientras tanto un mensaje con este id_externo; pida de nuevo su respuesta.",
		"A concurrent call stored a message with the same id_externo; repeat the request for its answer.")
	QueueTimeout = answer("queue_timeout", 503,
		"The branch's work kept this request waiting too long; try again shortly.",
		"El trabajo de la sucursal hizo esperar esta solicitud demasiado tiempo; intente de nuevo en un momento.",
		"The call waited for its turn in the branch's lane past its limit.")
	CompanyBusy = answer("company_busy", 503,
		"Too many documents of this company are being worked on at once; try again shortly.",
		"Se están procesando demasiados comprobantes de esta compañía a la vez; intente de nuevo en un momento.",
		"The company's share of the service is in use.")
	BranchBusy = answer("branch_busy", 503,
		"Too many documents of this branch are being worked on at once; try again shortly.",
		"Se están procesando demasiados comprobantes de esta sucursal a la vez; intente de nuevo en un momento.",
		"The branch's lane is full.")
	ServiceBusy = answer("service_busy", 503,
		"The service is working on as many documents as it can; try again shortly.",
		"El servicio está procesando tantos comprobantes como puede; intente de nuevo en un momento.",
		"Every lane of the service is full.")
	RateUnavailableNumbered = answer("exchange_rate_unavailable", 503,
		"The document keeps its number, but the central bank's %s rate for %s, which it needs, cannot be had now; send the same request again shortly.",
		"El comprobante conserva su número, pero el tipo de cambio de %s del Banco Central para %s, que necesita, no puede obtenerse ahora; envíe la misma solicitud de nuevo en un momento.",
		"A resumed send needs the central bank's rate, which cannot be had now.")
	SupplierUnreachable = answer("tax_authority_unreachable", 503,
		"The tax authority could not be asked about the supplier's document (%s); nothing was numbered. Try again shortly.",
		"No se pudo consultar a Hacienda sobre el documento del proveedor (%s); no se numeró nada. Intente de nuevo en un momento.",
		"A receive asks the tax authority about the supplier's document and it did not answer.")
	CredentialsBusy = answer("credentials_busy", 503,
		"Too many password checks at once; try again shortly.",
		"Demasiadas verificaciones de contraseña a la vez; intente de nuevo en un momento.",
		"The service is checking as many passwords as it takes at once.")
	PDFBusy = answer("pdf_busy", 503,
		"The service is drawing as many PDFs as it takes at once; try again shortly.",
		"El servicio está dibujando tantos PDF como admite a la vez; intente de nuevo en un momento.",
		"Every PDF slot of the service is in use.")
	ExportBusy = answer("export_busy", 503,
		"The service is running as many exports as it takes at once; try again shortly.",
		"El servicio está ejecutando tantas exportaciones como admite a la vez; intente de nuevo en un momento.",
		"Every export slot of the service is in use.")
)

// 500: the service failed; the cause is logged under the incident code.
var (
	InternalError = answer("internal_error", 500,
		"Sorry, something went wrong on our side; please report incident %s.",
		"Lo sentimos, algo falló de nuestro lado; por favor informe el incidente %s.",
		"An unexpected failure; the message quotes the incident code under which the cause was logged.")
	OutcomeUnknown = answer("outcome_unknown", 500,
		"Sorry, something went wrong on our side; please report incident %s. The data store did not confirm this change: it may have been made. Check whether it was (list or read it) before sending the request again.",
		"Lo sentimos, algo falló de nuestro lado; por favor informe el incidente %s. El almacén de datos no confirmó este cambio: puede haberse hecho. Verifique si se hizo (listándolo o leyéndolo) antes de enviar la solicitud de nuevo.",
		"A change whose commit the data store did not confirm: it may have been made (decision 136).")
)
