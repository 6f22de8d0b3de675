package msg

// What the registry checks find in a document (A.13): a refusal under the
// refuse policy, a warning otherwise (the send answer's advertencias).
var (
	RegistryRefusedQuestion = field("registry_question_refused", "the tax authority's registry refused the question: %s was not checked",
		"el registro de Hacienda no aceptó la consulta: %s no se verificó")
	RegistryUnreachable = field("registry_unreachable", "the tax authority's registry could not be reached: %s was not checked",
		"no se pudo consultar el registro de Hacienda: %s no se verificó")
	RegistryStale = field("registry_stale_answer", "%s (per the registry's answer of %s; it could not be asked again)",
		"%s (según la respuesta del registro del %s; no se pudo consultar de nuevo)")
	CompanyNotRegistered = field("registry_company_not_registered",
		"the company's identification %s is not in the taxpayer registry: check the company's identification",
		"la identificación %s de la compañía no está inscrita en el registro de contribuyentes: revise la identificación de la compañía")
	ActivityNotRegistered = field("registry_activity_not_registered",
		"activity %s is not one of %s's registered activities; its active ones are: %s",
		"la actividad %s no es una de las inscritas por %s; sus actividades activas son: %s")
	ActivityInactive = field("registry_activity_inactive",
		"activity %s of %s is inactive in the registry; its active ones are: %s",
		"la actividad %s de %s está inactiva en el registro; sus actividades activas son: %s")
	ReceptorNotRegistered = field("registry_receptor_not_registered",
		"the receptor %s is not registered in the tax authority's taxpayer registry%s: %s",
		"el receptor %s no está inscrito en el registro de contribuyentes de Hacienda%s: %s")
	ReceptorActivity = field("registry_receptor_activity_unknown",
		"activity %s is not one of the receptor %s's; its active ones are: %s",
		"la actividad %s no es una de las del receptor %s; sus actividades activas son: %s")
	ReceptorActivityInactive = field("registry_receptor_activity_inactive",
		"activity %s of the receptor %s is inactive in the registry",
		"la actividad %s del receptor %s está inactiva en el registro")
	CabysUnknown = field("registry_cabys_unknown",
		"CAByS code %s is not in the catalog in force (CAByS 2025): look it up at /api/registry/cabys/v4?q=",
		"el código CAByS %s no está en el catálogo vigente (CAByS 2025): búsquelo en /api/registry/cabys/v4?q=")
	CabysRate = field("registry_cabys_rate",
		"the CAByS catalog gives code %s an IVA rate of %s %%, and the line uses %s %%",
		"el catálogo CAByS da al código %s una tarifa de IVA de %s %%, y la línea usa %s %%")
	ExoneracionUnknown = field("registry_exoneration_unknown",
		"exoneration authorisation %s does not exist in the tax authority's exoneration registry",
		"la autorización de exoneración %s no existe en el registro de exoneraciones de Hacienda")
	ExoneracionOtherTaxpayer = field("registry_exoneration_other_taxpayer",
		"authorisation %s belongs to another taxpayer (%s), not to the document's receptor",
		"la autorización %s pertenece a otro contribuyente (%s), no al receptor del documento")
	ExoneracionExpired = field("registry_exoneration_expired",
		"authorisation %s expired on %s, before the issue date",
		"la autorización %s venció el %s, antes de la fecha de emisión")
	ExoneracionCabys = field("registry_exoneration_cabys",
		"authorisation %s does not cover the line's CAByS code %s",
		"la autorización %s no incluye el código CAByS %s de la línea")
	ExoneracionPercentage = field("registry_exoneration_percentage",
		"%s is above the percentage (%s) authorisation %s allows",
		"%s supera el porcentaje autorizado (%s) por la autorización %s")
	ExoneracionIssued = field("registry_exoneration_issue_date",
		"authorisation %s was issued on %s per the registry",
		"la autorización %s se emitió el %s según el registro")
	RateUnavailable = field("registry_rate_unavailable",
		"the central bank's %s rate for %s could not be had: send tipoCambio; nothing was numbered",
		"no se pudo obtener el tipo de cambio del BCCR de %s para %s: envíe tipoCambio; no se tomó ningún número")

	RegistryActivity    = part("registry_what_activity", "the economic activity", "la actividad económica")
	RegistryReceptor    = part("registry_what_receptor", "the receptor", "el receptor")
	RegistryCabys       = part("registry_what_cabys", "the CAByS code", "el código CAByS")
	RegistryExoneracion = part("registry_what_exoneration", "the exoneration", "la exoneración")
	NoneActive          = part("registry_none_active", "none", "ninguna")
	Standing            = part("registry_standing", " (standing: %s)", " (situación: %s)")
	AdviceFE            = part("registry_advice_fe", "issue a tiquete (04) instead, or correct the identification",
		"emita un tiquete electrónico (04) en su lugar, o corrija la identificación")
	AdviceTE = part("registry_advice_te", "correct the identification, or issue the tiquete without a receptor",
		"corrija la identificación, o emita el tiquete sin receptor")
	AdviceOther = part("registry_advice_other", "correct the identification", "corrija la identificación")
)
