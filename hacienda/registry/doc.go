// Package registry reads the tax authority's public registries, the data a
// document is judged against besides the v4.4 rules: the taxpayer registry
// with its economic activities (/fe/ae), the CAByS catalog in force
// (/fe/cabys), the exoneration authorisations (/fe/ex) and the central
// bank's exchange rate (/indicadores/tc).
//
// Client speaks the registry's HTTP API, with a timeout per call and typed
// errors: ErrNotRegistered (the registry answers that it has no such entry),
// *MalformedError (it refuses the question) and *UnavailableError (it could
// not be asked, or it failed or blocked us).
//
// Registry puts a shared cache in front of a Client: one entry per question
// for every tenant and replica, fresh for a TTL and kept a week longer to be
// served, marked stale, while the registry fails; one call in flight per
// question in a process; calls paced below the registry's limits by a Pacer
// the replicas share.
//
// Check judges a calculated document against the registries and returns
// what it found, each finding a refusal or a warning; the caller applies the
// company's policy (refuse, warn or off).
package registry
