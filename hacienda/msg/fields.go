package msg

// What any request field may get: presence, length, text, numbers, dates,
// codes and e-mail addresses.
var (
	Required      = field("required", "is required", "es obligatorio")
	InvalidUTF8   = field("invalid_utf8", "must be valid UTF-8 text", "debe ser texto UTF-8 válido")
	InvalidUTF8At = field("invalid_utf8_at", "is not valid UTF-8 (byte %d)", "no es UTF-8 válido (byte %d)")
	XMLCharacter  = field("xml_character",
		"contains the character U+%04X at position %d, which an XML document cannot carry",
		"contiene el carácter U+%04X en la posición %d, que un documento XML no puede llevar")
	LengthExact      = field("length_exact", "must be %d characters long", "debe tener %d caracteres")
	LengthBetween    = field("length_between", "must be between %d and %d characters long", "debe tener entre %d y %d caracteres")
	MinLength        = field("min_length", "must have at least %d characters", "debe tener al menos %d caracteres")
	MaxLength        = field("max_length", "must have at most %d characters", "debe tener como máximo %d caracteres")
	MaxBytes         = field("max_bytes", "must have at most %d bytes", "debe tener como máximo %d bytes")
	NotANumber       = field("not_a_number", "must be a number", "debe ser un número")
	NotNegative      = field("negative", "must not be negative", "no debe ser negativo")
	GreaterThan0     = field("not_positive", "must be greater than 0", "debe ser mayor que 0")
	PositiveInt      = field("not_positive_integer", "must be a positive integer", "debe ser un número entero positivo")
	OneOf            = field("one_of", "must be one of %s", "debe ser uno de %s")
	DateTime         = field("date_time_format", "must be a date-time like 2026-11-21T14:03:00", "debe ser una fecha y hora como 2026-11-21T14:03:00")
	FlagSN           = field("flag_s_n", "must be S or N", "debe ser S o N")
	FlagSNQuoted     = field("flag_s_n_quoted", `must be "S" or "N"`, `debe ser "S" o "N"`)
	RequiredSN       = field("flag_s_n_required", `is required: "S" or "N"`, `es obligatorio: "S" o "N"`)
	RequiredInType   = field("required_in_type", "is required in this document type", "es obligatorio en este tipo de documento")
	NotAllowedInType = field("not_allowed_in_type", "is not allowed in this document type", "no se permite en este tipo de documento")

	InvalidEmail = field("invalid_email", "'%s' is not a valid e-mail address", "'%s' no es una dirección de correo electrónico válida")
	EmailSpaces  = field("email_spaces", "addresses are separated by ';' without spaces", "las direcciones se separan con ';', sin espacios")
	EmailEmpty   = field("email_empty", "contains an empty address", "contiene una dirección vacía")
	EmailsMax    = field("email_too_many", "must have at most %d addresses", "debe tener como máximo %d direcciones")
)
