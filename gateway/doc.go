// Package gateway is the HTTP face of facturad: the API listener with the
// routes of the version 4 contract and the admin listener with health,
// readiness and metrics.
//
// It is the only package that imports fasthttp. It stays thin: it gives
// every request an id, enforces per-route body limits and timeouts,
// authenticates the AuthToken + Basic pair, decodes JSON and multipart bodies,
// calls into the consumer-side interfaces it declares (Tenants for the
// tenancy calls, Readiness for /readyz), and shapes answers and the error
// bodies of the contract (A.6 and A.7). No business rule lives here.
//
// The design notes are in docs/design/gateway.md.
package gateway
