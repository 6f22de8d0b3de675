package msg

// Companies, branches, API users, webhooks and the tenant's settings
// (A.2–A.4, A.12, A.14).
var (
	CompanyIDType = field("company_identification_type", "must be 01 (cédula física), 02 (cédula jurídica), 03 (DIMEX) or 04 (NITE)",
		"debe ser 01 (cédula física), 02 (cédula jurídica), 03 (DIMEX) o 04 (NITE)")
	SucursalCode    = field("sucursal_code", "must be a 3-digit code from 001 to 999", "debe ser un código de 3 dígitos del 001 al 999")
	ProvinciaDigit  = field("provincia_digit", "must be one digit from 1 to 7", "debe ser un dígito del 1 al 7")
	LocationDigits  = field("location_two_digits", "must be two digits, 01 to 99", "debe tener dos dígitos, del 01 al 99")
	CantonUnknown   = field("canton_unknown", "cantón %s of provincia %s is not in the tax authority's location catalogue", "el cantón %s de la provincia %s no está en el catálogo de ubicaciones de Hacienda")
	DistritoUnknown = field("distrito_unknown", "distrito %s of cantón %s, provincia %s is not in the tax authority's location catalogue",
		"el distrito %s del cantón %s, provincia %s, no está en el catálogo de ubicaciones de Hacienda")
	TelephoneDigits  = field("telephone_digits", "must be a telephone number of %d to %d digits", "debe ser un número de teléfono de %d a %d dígitos")
	TelephoneCountry = field("telephone_country_code", "must be a telephone country code of 1 to %d digits", "debe ser un código telefónico de país de 1 a %d dígitos")
	EmailOne         = field("email_one", "must be one e-mail address", "debe ser una sola dirección de correo electrónico")
	EmailList        = field("email_list_too_long", "must be at most %d e-mail addresses separated by ';'", "debe tener como máximo %d direcciones de correo electrónico separadas por ';'")
	EmailLength      = field("email_too_long", "an e-mail address must have at most %d characters", "una dirección de correo electrónico debe tener como máximo %d caracteres")
	EmailFormat      = field("email_invalid", "must be a valid e-mail address (several are separated by ';' without spaces)",
		"debe ser una dirección de correo electrónico válida (varias se separan con ';' sin espacios)")
	Currency       = field("currency_code", "must be an ISO 4217 currency code of the v4.4 schemas, such as CRC or USD", "debe ser un código de moneda ISO 4217 de los esquemas v4.4, como CRC o USD")
	RegistryChecks = field("validaciones_registro_value", `must be "refuse", "warn", "off" or empty (the service's setting)`,
		`debe ser "refuse", "warn", "off" o vacío (la configuración del servicio)`)
	Ambiente     = field("ambiente_value", "must be %q or %q", "debe ser %q o %q")
	CuotaMensual = field("cuota_mensual_range", "must be a whole number of documents from 0 to %d, or empty for no limit",
		"debe ser un número entero de comprobantes de 0 a %d, o vacío para no tener límite")
	Username = field("usuario_format", "must have 3 to 64 letters, digits or . _ @ - and start with a letter or digit",
		"debe tener de 3 a 64 letras, dígitos o . _ @ - y empezar con una letra o un dígito")
	ActividadComercial = field("actividad_comercial_length", "must be the %d-character code of the economic activity", "debe ser el código de %d caracteres de la actividad económica")
	CertificateSize    = field("certificate_too_large", "must be at most %d KiB", "debe tener como máximo %d KiB")
	PINRequired        = field("clave_pin_required", "is required with a certificate (it is the certificate's PIN)", "es obligatoria con un certificado (es el PIN del certificado)")

	CertificatePIN        = field("certificate_wrong_pin", "cannot be opened with the PIN given in Clave", "no se puede abrir con el PIN indicado en Clave")
	CertificateIterations = field("certificate_iterations",
		"asks for more key-derivation iterations than the service accepts (at most 200,000; files made by the usual tools use 2,048 to 10,000): export it again",
		"pide más iteraciones de derivación de clave de las que el servicio acepta (como máximo 200 000; los archivos de las herramientas habituales usan de 2048 a 10 000): expórtelo de nuevo")
	CertificateFormat = field("certificate_not_pkcs12", "is not a PKCS#12 (.p12/.pfx) file", "no es un archivo PKCS#12 (.p12/.pfx)")
	CertificateNoKey  = field("certificate_no_key", "holds no private key; upload the .p12 with its key (the llave criptográfica)",
		"no contiene llave privada; suba el .p12 con su llave (la llave criptográfica)")
	CertificateKey = field("certificate_key_type", "has a key the tax authority does not accept: it must be RSA of at least 2048 bits",
		"tiene una llave que Hacienda no acepta: debe ser RSA de al menos 2048 bits")
	CertificateUnreadable = field("certificate_unreadable", "cannot be opened: it is not a PKCS#12 (.p12/.pfx) file or the PIN in Clave is wrong",
		"no se puede abrir: no es un archivo PKCS#12 (.p12/.pfx) o el PIN en Clave es incorrecto")
	CertificateNoID        = field("certificate_no_identification", "does not carry the holder's identification", "no lleva la identificación del titular")
	CertificateOtherHolder = field("certificate_other_taxpayer", "belongs to another taxpayer: its identification does not match Identificacion",
		"pertenece a otro contribuyente: su identificación no coincide con Identificacion")
	CertificateExpired  = field("certificate_expired", "expired on %s", "venció el %s")
	CertificateNoExpiry = field("certificate_no_expiry", "has no expiry date", "no tiene fecha de vencimiento")
	RequiredWithFE      = field("required_with_facturacion", "is required when FacturacionElectronica is true", "es obligatorio cuando FacturacionElectronica es verdadero")
	CertificateNewID    = field("certificate_required_new_identification", "a new certificate is required when the identification changes: the stored one belongs to %s",
		"se requiere un certificado nuevo cuando cambia la identificación: el guardado pertenece a %s")
	NotasTooLong   = field("notas_impresas_too_long", "must have at most %d characters (it has %d)", "debe tener como máximo %d caracteres (tiene %d)")
	LogoAndRemoval = field("quitar_logo_with_logo",
		"removes the logo: send it without a new logo, or send the new logo alone to replace the old one",
		"quita el logo: envíelo sin un logo nuevo, o envíe solo el logo nuevo para reemplazar el anterior")
	LogoTooLarge   = field("logo_too_large", "must be at most %d KiB", "debe ser de como máximo %d KiB")
	LogoFormat     = field("logo_format", "must be a PNG or JPEG image", "debe ser una imagen PNG o JPEG")
	LogoSize       = field("logo_size", "must be from 1 to %d pixels wide and high", "debe medir de 1 a %d píxeles de ancho y de alto")
	LogoUnreadable = field("logo_unreadable",
		"could not be read as a PNG or JPEG image: the file is damaged or uses a kind of image those formats' common readers do not",
		"no se pudo leer como imagen PNG o JPEG: el archivo está dañado o usa un tipo de imagen que los lectores comunes de esos formatos no leen")
	PINOnlyWithCertificate = field("clave_pin_only_with_certificate",
		"is taken only with a Certificado, as the PIN of that file: send the certificate with it, or leave Clave empty to keep the stored certificate and PIN",
		"solo se acepta con un Certificado, como el PIN de ese archivo: envíe el certificado con ella, o deje Clave vacía para conservar el certificado y el PIN guardados")
	PINWithoutCertificate = field("clave_pin_without_certificate",
		"a new PIN goes with a new certificate: send Certificado with it, or leave Clave empty to keep the stored certificate and PIN",
		"un PIN nuevo va con un certificado nuevo: envíe Certificado con él, o deje Clave vacía para conservar el certificado y el PIN guardados")
	AmbienteCredentials = field("ambiente_credentials_required",
		"moving the company from %s to %s takes that environment's credentials and certificate in the same update: send UsuarioHacienda, ContrasenaHacienda, Certificado and Clave of %s",
		"pasar la compañía de %s a %s requiere las credenciales y el certificado de ese ambiente en la misma actualización: envíe UsuarioHacienda, ContrasenaHacienda, Certificado y Clave de %s")
	AmbienteUnsettled = field("ambiente_documents_unsettled",
		"%d documents numbered in %s are not settled yet; the company moves to %s once the tax authority has settled them (GET /api/admin/documentos-detenidos/v4 lists those that are late)",
		"%d comprobantes numerados en %s aún no están resueltos; la compañía pasa a %s cuando Hacienda los haya resuelto (GET /api/admin/documentos-detenidos/v4 lista los atrasados)")
	PeriodoRequired    = field("periodo_required", "is required: the month to summarize, written YYYY-MM", "es obligatorio: el mes por resumir, escrito AAAA-MM")
	PeriodoFormat      = field("periodo_format", "must be a month written YYYY-MM, from 2000-01 to 2099-12", "debe ser un mes escrito AAAA-MM, de 2000-01 a 2099-12")
	CompaniaIDRequired = field("compania_id_required", "is required for an admin or a reseller: name the company whose documents to list",
		"es obligatorio para un administrador o un revendedor: indique la compañía cuyos comprobantes se listan")
	BranchExists         = field("sucursal_exists", "branch %s already exists in this company", "la sucursal %s ya existe en esta compañía")
	UsernameTaken        = field("usuario_taken", "user name %s is taken", "el nombre de usuario %s ya está en uso")
	UsernameTakenCompany = field("usuario_taken_company", "user name %s is taken in this company", "el nombre de usuario %s ya está en uso en esta compañía")
	TokenRotated         = field("api_token_rotated_meanwhile", "was rotated by another request meanwhile; list the users and rotate again if needed",
		"otra solicitud lo rotó mientras tanto; liste los usuarios y rótelo de nuevo si hace falta")

	WebhooksUnavailable = field("webhooks_unavailable", "webhooks are not available on this service", "los webhooks no están disponibles en este servicio")
	EventsRequired      = field("eventos_required", "name at least one event: %s", "indique al menos un evento: %s")
	EventUnknown        = field("evento_unknown", "%q is not an event; the events are %s", "%q no es un evento; los eventos son %s")
	WebhooksMax         = field("webhooks_too_many", "a company has at most %d webhooks; delete one first", "una compañía tiene como máximo %d webhooks; elimine uno primero")
	WebhookURLAbsolute  = field("webhook_url_absolute", "must be an absolute URL such as https://example.com/hooks", "debe ser una URL absoluta, como https://example.com/hooks")
	WebhookURLUser      = field("webhook_url_userinfo", "must not carry a user or password (the signature authenticates the deliveries)",
		"no debe llevar usuario ni contraseña (la firma autentica las entregas)")
	WebhookURLFragment = field("webhook_url_fragment", "must not have a fragment", "no debe tener fragmento")
	WebhookURLLength   = field("webhook_url_too_long", "must be at most 2048 characters", "debe tener como máximo 2048 caracteres")
	WebhookHTTPSOrHTTP = field("webhook_url_scheme_sandbox", "must be https (http is allowed in the sandbox environment)", "debe ser https (http se permite en el ambiente sandbox)")
	WebhookHTTPS       = field("webhook_url_scheme", "must be https", "debe ser https")
	WebhookNotPublic   = field("webhook_address_not_public", "webhook address not allowed: %s is not a public address%s", "dirección de webhook no permitida: %s no es una dirección pública%s")
	WebhookLocalhost   = field("webhook_address_localhost", "webhook address not allowed: localhost%s", "dirección de webhook no permitida: localhost%s")
	WebhookHostPrivate = field("webhook_host_not_public", "webhook address not allowed: the host does not resolve to a public address%s",
		"dirección de webhook no permitida: el host no resuelve a una dirección pública%s")
	// WebhookPrivateHint takes the name of the setting that allows private addresses.
	WebhookPrivateHint = part("webhook_private_hint", " (loopback and private addresses are allowed only for trials: a sandbox service with %s)",
		" (las direcciones de loopback y privadas solo se permiten en pruebas: un servicio sandbox con %s)")
)
