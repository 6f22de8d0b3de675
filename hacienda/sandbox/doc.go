// Package sandbox simulates the tax authority's token service and reception
// API (Ministerio de Hacienda, comprobantes electrónicos v4.4) so that the
// service, its tests and its load tool have a faithful counterpart that runs
// anywhere.
//
// It speaks the real protocol: the Keycloak-style token endpoint
// (/auth/realms/rut-stag/protocol/openid-connect/token) with password and
// refresh grants and the documented lifetimes (300 s access, 36 000 s
// refresh, configurable); POST {base}/recepcion answering 202 with a
// Location header, or 400 with the reason in X-Error-Cause; GET
// {base}/recepcion/{clave} answering clave, fecha, ind-estado and
// respuesta-xml with hyphenated names; bearer authentication throughout.
//
// On receipt it checks what the tax authority checks at reception (the
// token, the request's shape, that the body's clave and issuer match the
// XML's, duplicate claves). Later, when the document's processing delay has
// passed, it judges the document: the built-in consistency checks of the
// clave, plus the schema, signature and totals checks injected through
// Options.Checks. The verdict is a MensajeHacienda signed with the sandbox's
// own certificate, and the document ends aceptado or rechazado, with
// DetalleMensaje lines saying why.
//
// It also serves the tax authority's public registry API at its root
// (/fe/ae, /fe/cabys, /fe/ex, /indicadores/tc/dolar and its history) in
// the real answers' shapes, with a deterministic data set that is
// permissive by rule and refusing by name (docs/sandbox-registry.md), the
// real rate limit and IP block when Options.RegistryLimit asks for them,
// and faults of its own. With Options.RegistryChecks the judging step
// checks a document against the same data: the receptor's registration,
// the CAByS codes, the exonerations.
//
// Faults can be injected at start (Options.Faults) and at run time
// (SetFaults, or PUT /_sandbox/faults): added latency, error rates per
// status code, dropped answers after a submission was recorded, a refusing
// token service, lost callbacks, documents that stay procesando forever, a
// full outage and forced rejections. Randomness comes from Options.Seed, so runs repeat.
//
// Documents are kept in memory, up to Options.MaxDocuments; with
// Options.Store (sqlitestate keeps one in a SQLite file) they are kept
// there too, a receipt before its 202 and a verdict before it is told, so
// that a sandbox started again on it knows every document received before.
//
// NewTestServer gives tests a running sandbox the way net/http/httptest
// gives a server; Listen and ListenAndServe run it on an address.
package sandbox
