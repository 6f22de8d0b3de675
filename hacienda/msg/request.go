package msg

// Reading a request body: JSON, forms, files, and the JSON types of
// values.
var (
	BodyNotObject   = field("body_not_object", "the request body must be a JSON object", "el cuerpo de la solicitud debe ser un objeto JSON")
	BodyInvalidJSON = field("body_invalid_json", "the request body is not valid JSON (at byte %d)", "el cuerpo de la solicitud no es JSON válido (en el byte %d)")
	BodyUnreadable  = field("body_unreadable", "the request body could not be read", "no se pudo leer el cuerpo de la solicitud")
	BodyInvalidUTF8 = field("body_invalid_utf8", "the request body is not valid UTF-8 (at byte %d)", "el cuerpo de la solicitud no es UTF-8 válido (en el byte %d)")
	BodySurrogate   = field("body_unpaired_surrogate", "the request body has an unpaired surrogate escape at byte %d; an XML document cannot carry it",
		"el cuerpo de la solicitud tiene un escape de sustituto sin pareja en el byte %d; un documento XML no puede llevarlo")

	// WrongJSONType takes a JSONWant part and a JSONGot part.
	WrongJSONType    = field("json_type_mismatch", "must be a JSON %s, not %s", "debe ser %s JSON, no %s")
	WholeNumberRange = field("whole_number_range", "must be a whole number within range, not %s", "debe ser un número entero dentro del rango, no %s")
	NumberRange      = field("number_range", "must be a number within range, not %s", "debe ser un número dentro del rango, no %s")

	JSONWantString  = part("json_want_string", "string", "una cadena")
	JSONWantNumber  = part("json_want_number", "number", "un número")
	JSONWantBoolean = part("json_want_boolean", "boolean", "un booleano")
	JSONWantArray   = part("json_want_array", "array", "un arreglo")
	JSONWantObject  = part("json_want_object", "object", "un objeto")
	JSONGotString   = part("json_got_string", "a string", "una cadena")
	JSONGotNumber   = part("json_got_number", "a number", "un número")
	JSONGotBoolean  = part("json_got_boolean", "a boolean", "un booleano")
	JSONGotArray    = part("json_got_array", "an array", "un arreglo")
	JSONGotObject   = part("json_got_object", "an object", "un objeto")
	JSONGotNull     = part("json_got_null", "null", "null")
)

// The decoders of the tenancy, webhook and listing bodies (package api).
var (
	JSONObjectRequired = field("json_object_required", "a JSON object is required", "se requiere un objeto JSON")
	InvalidJSONAt      = field("invalid_json", "invalid JSON: %s (at byte %d)", "JSON no válido (en el byte %[2]d)")
	InvalidJSON        = field("invalid_json_detail", "invalid JSON: %s", "JSON no válido: %s")
	JSONTruncated      = field("json_truncated", "invalid JSON: the body ends before the JSON does", "JSON no válido: el cuerpo termina antes que el JSON")
	JSONTrailing       = field("json_trailing_data", "invalid JSON: data after the object", "JSON no válido: hay datos después del objeto")
	MultipartRequired  = field("multipart_required", "a multipart/form-data form is required", "se requiere un formulario multipart/form-data")
	MultipartBoundary  = field("multipart_boundary", "a multipart/form-data body with a boundary is required", "se requiere un cuerpo multipart/form-data con su boundary")
	MultipartBroken    = field("multipart_unreadable", "the multipart form could not be read", "no se pudo leer el formulario multipart")
	FormBroken         = field("form_unreadable", "the form could not be read (a malformed %%-escape or a ';' separator)",
		"no se pudo leer el formulario (un escape %% mal formado o un separador ';')")
	NotAString     = field("not_a_string", "must be a string", "debe ser una cadena")
	NotStringArray = field("not_a_string_array", "must be an array of strings", "debe ser un arreglo de cadenas")
	FileUnreadable = field("file_unreadable", "the file could not be read", "no se pudo leer el archivo")
	NotAFile       = field("not_a_file", "must be sent as a file", "debe enviarse como archivo")
)

// The query and path parameters of the listings, the export, the reports
// and the registry lookups.
var (
	DesdeRequired    = field("desde_required", "is required: the first issue date-time of the period, like 2026-11-01", "es obligatorio: la primera fecha y hora de emisión del período, como 2026-11-01")
	HastaRequired    = field("hasta_required", "is required: the last issue date-time of the period, like 2026-11-30 (the whole day)", "es obligatorio: la última fecha y hora de emisión del período, como 2026-11-30 (el día entero)")
	HastaBeforeDesde = field("hasta_before_desde", "must not be before desde", "no debe ser anterior a desde")
	PeriodTooLong    = field("period_too_long", "must be at most 366 days after desde: export a longer period in parts", "debe ser como máximo 366 días posterior a desde: exporte un período más largo por partes")
	// DesdeFormat and HastaFormat take a DateLocal or DateYears part.
	DesdeFormat = field("desde_format", "%s like 2026-11-21T14:03:00, or a date like 2026-11-21", "%s como 2026-11-21T14:03:00, o una fecha como 2026-11-21")
	HastaFormat = field("hasta_format", "%s like 2026-11-21T23:59:59, or a date like 2026-11-21 (the whole day)", "%s como 2026-11-21T23:59:59, o una fecha como 2026-11-21 (el día entero)")
	DateLocal   = part("date_local", "must be a Costa Rica local date-time", "debe ser una fecha y hora local de Costa Rica")
	DateYears   = part("date_years", "must have a year from 0001 to 9999: a Costa Rica local date-time", "debe tener un año de 0001 a 9999: una fecha y hora local de Costa Rica")

	CompaniaIDParam = field("compania_id_positive", "must be a company's id: a positive integer", "debe ser el id de una compañía: un número entero positivo")
	CompaniaIDAudit = field("compania_id_audit", "must be a company's id: a positive integer (0 is the platform's log, an admin's)",
		"debe ser el id de una compañía: un número entero positivo (0 es el registro de la plataforma, de un administrador)")
	Formato       = field("formato_value", "must be csv or json (the default)", "debe ser csv o json (el predeterminado)")
	ParamRepeated = field("parameter_repeated", "was given more than once with different values; give it once", "se indicó más de una vez con valores distintos; indíquelo una sola vez")
	LimitRange    = field("limit_range", "must be a whole number from 1 to %d", "debe ser un número entero de 1 a %d")
	CursorPage    = field("cursor_invalid_page", "is not a cursor from a previous page", "no es un cursor de una página anterior")
	CursorListing = field("cursor_invalid",
		"is not a cursor of this listing with these filters: start again without a cursor, or pass the next value of the last answer unchanged with the same filters",
		"no es un cursor de este listado con estos filtros: empiece de nuevo sin cursor, o pase sin cambios el valor next de la última respuesta con los mismos filtros")
	IdentificationNumber = field("identification_number", "must be an identification number: 9 to 12 digits, without dashes", "debe ser un número de identificación: de 9 a 12 dígitos, sin guiones")
	CabysCode            = field("cabys_code", "must be a CAByS code: 13 digits", "debe ser un código CAByS: 13 dígitos")
	CabysQuery           = field("cabys_query_required", "give q (words to search for) or codigo (a 13-digit CAByS code)", "indique q (palabras por buscar) o codigo (un código CAByS de 13 dígitos)")
	Autorizacion         = field("autorizacion_format", "must be an authorisation number, 3 to 40 characters (e.g. AL-00460853-20)", "debe ser un número de autorización, de 3 a 40 caracteres (p. ej. AL-00460853-20)")
	VencenRequired       = field("vencen_antes_de_required", "is required: a date like 2026-12-31 (the certificates expiring before its start, Costa Rica time)",
		"es obligatorio: una fecha como 2026-12-31 (los certificados que vencen antes de su inicio, hora de Costa Rica)")
	VencenFormat         = field("vencen_antes_de_format", "must be a date like 2026-12-31, in the years 0001 to 9999", "debe ser una fecha como 2026-12-31, de los años 0001 a 9999")
	DateOnly             = field("date_format", "must be a date, YYYY-MM-DD", "debe ser una fecha, AAAA-MM-DD")
	RateFuture           = field("rate_date_future", "is in the future: the central bank has no rate for it yet", "es futura: el Banco Central aún no tiene tipo de cambio para ella")
	RegistryRefusesValue = field("registry_value_refused", "the tax authority's registry does not accept this value", "el registro de Hacienda no acepta este valor")
)

// The gateway's own checks of the tenancy calls and of the derived
// documents' bodies.
var (
	UpdateNeedsForm = field("company_update_form",
		"this path updates a company and takes a multipart/form-data form; a branch is updated at /api/companies/{CompaniaId}/branches/{Id}/v4",
		"esta ruta actualiza una compañía y recibe un formulario multipart/form-data; una sucursal se actualiza en /api/companies/{CompaniaId}/branches/{Id}/v4")
	ConflictUsuario   = field("conflict_usuario", "is already taken", "ya está en uso")
	ConflictCompany   = field("conflict_company", "conflicts with an existing company", "coincide con una compañía existente")
	ConflictBranch    = field("conflict_sucursal", "a branch with this code already exists in the company", "ya existe una sucursal con este código en la compañía")
	ConflictRecord    = field("conflict_record", "conflicts with an existing record", "coincide con un registro existente")
	StringOrNumber    = field("not_string_or_number", "must be a string or a number", "debe ser una cadena o un número")
	NotAnInteger      = field("not_an_integer", "must be an integer", "debe ser un número entero")
	NotAnArray        = field("not_an_array", "must be an array", "debe ser un arreglo")
	NotAnObject       = field("not_an_object", "must be an object", "debe ser un objeto")
	UnknownField      = field("unknown_field", "is not a field of this call", "no es un campo de esta llamada")
	UnknownFieldNear  = field("unknown_field_near", "is not a field of this call; did you mean %s?", "no es un campo de esta llamada; ¿quiso decir %s?")
	MisplacedField    = field("misplaced_field", "is not a field here; it is a field of %s", "no es un campo aquí; es un campo de %s")
	ComputedField     = field("computed_field", "is computed by the service and cannot be sent; leave it out", "lo calcula el servicio y no se puede enviar; omítalo")
	ComputedUnlessREP = field("computed_field_unless_rep",
		"is computed by the service and cannot be sent, except in a payment receipt (tipo_documento 10); leave it out",
		"lo calcula el servicio y no se puede enviar, salvo en un recibo electrónico de pago (tipo_documento 10); omítalo")
	ComputedBaseUnless = field("computed_base_imponible",
		"is computed by the service and cannot be sent unless iVACobradoFabrica is 01 or the line's IVA is code 07; leave it out",
		"lo calcula el servicio y no se puede enviar salvo que iVACobradoFabrica sea 01 o el IVA de la línea sea código 07; omítalo")
	ServiceField    = field("service_field", "is set by the service and cannot be sent; leave it out", "lo asigna el servicio y no se puede enviar; omítalo")
	RepeatedField   = field("field_repeated", "is given more than once; give it once", "se indica más de una vez; indíquelo una sola vez")
	RepeatedFieldAs = field("field_repeated_as", "is given more than once (as %s); give it once", "se indica más de una vez (como %s); indíquelo una sola vez")
	TextNotFile     = field("text_sent_as_file", "must be sent as a text field, not a file", "debe enviarse como campo de texto, no como archivo")
	FileEmpty       = field("file_empty", "the file is empty", "el archivo está vacío")
	PDFFormato      = field("pdf_formato_invalid", "must be \"carta\" (letter paper) or \"ticket\" (80 mm), or absent for the document type's own",
		"debe ser \"carta\" (papel carta) o \"ticket\" (80 mm), u omitirse para el formato propio del tipo de comprobante")
	NotValidJSON = field("not_valid_json", "is not valid JSON", "no es JSON válido")
	Unreadable   = field("body_cannot_be_read", "cannot be read: %s", "no se puede leer: %s")
	QuotaUsed    = field("cuota_mensual_exhausted",
		"the company has numbered %d documents in %s (a Costa Rica calendar month) and its monthly quota is %d; no document is numbered beyond it until the quota is raised or the month ends",
		"la compañía numeró %d comprobantes en %s (mes calendario de Costa Rica) y su cuota mensual es %d; no se numera ninguno más hasta que se aumente la cuota o termine el mes")
	HeaderBroken = field("header_line_broken",
		"A request header line has no ':': a header value was broken over several lines (a base64 Authorization: Basic value wraps at 76 columns: encode it with base64 -w0, or use curl -u usuario:contrasena).",
		"Una línea de encabezado de la solicitud no tiene ':': un valor de encabezado se partió en varias líneas (un valor base64 de Authorization: Basic se corta a las 76 columnas: codifíquelo con base64 -w0, o use curl -u usuario:contrasena).")
	AuthorizationWrapped = field("authorization_wrapped",
		"The Authorization header's Basic value is broken over several lines: encode usuario:contrasena on one line (base64 -w0, or curl -u usuario:contrasena).",
		"El valor Basic del encabezado Authorization está partido en varias líneas: codifique usuario:contrasena en una sola línea (base64 -w0, o curl -u usuario:contrasena).")
	HeaderWrapped = field("header_value_wrapped",
		"The %s header's value is broken over several lines (a line without ':' follows it): send it on one line.",
		"El valor del encabezado %s está partido en varias líneas (lo sigue una línea sin ':'): envíelo en una sola línea.")
)
