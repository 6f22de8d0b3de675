package gateway

// The answer shapes of the contract (A.2–A.4 and the reseller call): every
// key an answer must carry, with its JSON type.

var (
	shapeCompanySearch = map[string]jsonKind{
		"id": kInt, "tipoIdentificacion": kString, "numeroIdentificacion": kString,
		"razonSocial": kString, "tipoCliente": kString, "activo": kFlag,
		"facturacionElectronica": kBool, "createdAt": kDate, "updatedAt": kDate,
		"certificadoVencido": kBool, "expiracionCertificado": kDate,
		"validacionesRegistro": kString,                                // A.13
		"ambiente":             kString, "cuotaMensual": kNumberOrNull, // A.14
	}
	shapeCompanyGet = merge(shapeCompanySearch, map[string]jsonKind{
		"usuarioHacienda": kString, "contrasenaHacienda": kString, "clave": kString,
		"correoNotificaciones": kString,                     // A.14
		"notasImpresas":        kString, "tieneLogo": kBool, // the printed documents
	})
	shapeCompanyUpdate = merge(shapeCompanyGet, map[string]jsonKind{"mensajeApi": kString})
	shapeCompanyCreate = map[string]jsonKind{
		"companiaId": kInt, "sucursalId": kInt, "tipoIdentificacion": kString,
		"numeroIdentificacion": kString, "tipoCliente": kString, "usuarioHacienda": kString,
		"contrasenaHacienda": kString, "activo": kFlag, "clave": kString, "razonSocial": kString,
		"razonComercial": kString, "provincia": kString, "canton": kString, "distrito": kString,
		"barrio": kStringOrNull, "otrasSenas": kString, "codPais": kString, "telefono": kString,
		"fax": kString, "correoElectronico": kString, "sucursal": kString,
		"monedaExtranjera": kString, "facturacionElectronica": kBool, "usuario": kString,
		"contrasena": kString, "apiToken": kString, "mensajeApi": kString,
		"validacionesRegistro": kString,                                                                 // A.13
		"ambiente":             kString, "cuotaMensual": kNumberOrNull, "correoNotificaciones": kString, // A.14
		"notasImpresas": kString, "tieneLogo": kBool, // the printed documents
	}
	shapeBranch = map[string]jsonKind{
		"id": kInt, "companiaId": kInt, "razonComercial": kString, "provincia": kString,
		"canton": kString, "distrito": kString, "barrio": kStringOrNull, "otrasSenas": kString,
		"codPais": kString, "telefono": kString, "fax": kString, "correoElectronico": kString,
		"activo": kFlag, "createdAt": kDate, "updatedAt": kDate, "sucursal": kString,
		"monedaLocal": kString, "monedaExtranjera": kString, "verMonedaExtranjera": kFlag,
		"licencia": kString,
	}
	shapeBranchCreate = merge(shapeBranch, map[string]jsonKind{
		"usuario": kString, "contrasena": kString, "apiToken": kString, "mensajeApi": kString,
	})
	shapeBranchUpdate = merge(shapeBranch, map[string]jsonKind{"mensaje_api": kString})
	shapeReceived     = map[string]jsonKind{
		"id_externo": kString, "clave": kString, "tipoDocumento": kString, "fechaEmision": kDate,
		"emisor": kObject, "receptor": kObject, "montoTotalImpuesto": kNumberOrNull, "totalFactura": kNumber,
		"politicaFirmaProveedor": kString, "mensaje": kString, "consecutivoReceptor": kString, "fechaMensaje": kDate, "estado": kString,
		"estado_humanizado": kString, "mensaje_api": kString, "mensaje_api_key": kString,
		"codigo_mensaje_hacienda": kString, "mensaje_hacienda": kString, "detalle_mensaje_hacienda": kArray,
	}
	shapeDocumentEmail = map[string]jsonKind{
		"estado": kString, "destinatarios": kArray, "rechazados": kArray, "intentos": kInt, "ultimoIntento": kDate,
		"ultimoError": kString, "proximoIntento": kDate, "enviado": kDate, "fallido": kDate, "creado": kDate,
	}
	shapeCredentials = map[string]jsonKind{
		"usuario": kString, "contrasena": kString, "apiToken": kString, "mensaje_api": kString,
	}
)

func merge(a, b map[string]jsonKind) map[string]jsonKind {
	m := make(map[string]jsonKind, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}
