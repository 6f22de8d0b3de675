// Package client is a Go client for the facturad API (contract version 4):
// companies, branches and API users, and the document calls (send, check,
// read, the signed XML and the tax authority's answer, calculate; void,
// re-issue and payment receipt of an issued document).
//
// It speaks plain net/http, so it fits an integrator's program as it is:
// bring your own *http.Client (timeouts, proxies, TLS) or take the default.
// Every call carries the two credentials of one API user (the AuthToken
// header and Basic usuario:contrasena); Client.As gives a client speaking
// for another user over the same connections.
//
// # Shapes
//
// Every body is the service's own type: the client writes and reads
// exactly what the service reads and writes, so the two cannot drift. The
// document bodies come from package hacienda (hacienda.SendDocumentRequest,
// hacienda.CalculateRequest and hacienda.AmountsCalculateDocumentResponse),
// the v4.4 model with exact decimal amounts; every other body (the
// company, branch and user calls', Document, ReceivedDocument, the
// listings' pages, the webhooks' and the deliveries' envelope) comes from
// package hacienda/api, which this package re-exports under the names used
// here (Company, Document, WebhookEvent...). Both are leaves (they import
// only the standard library, an XML tree library and a decimal library),
// so using them does not bring the server (fasthttp, the stores, the
// pipeline) into an integrator's build.
//
// # Errors
//
// A call that gets an error answer returns an *Error: the status, the
// message and, for a 400, the offending fields by their request paths
// (errors.As). Test for the common cases with errors.Is and ErrValidation,
// ErrUnauthorized, ErrNotFound, ErrConflict, ErrTooLarge, ErrRateLimited,
// ErrUnavailable. A send or check the service answers with 500 and a
// Document body (the tax authority could not be reached, the certificate
// expired) returns both the Document and the *Error.
//
// # Retries
//
// A 429 or 503 answer means the service did nothing with the request (a
// full queue, a rate limit, a document with the same id_externo still
// being sent), so every call is retried after the answer's Retry-After, up
// to RetryPolicy.MaxAttempts and never past RetryPolicy.MaxWait for one
// wait nor past the context's deadline: when the wait would end after the
// deadline the call returns the answer's *Error at once instead of
// sleeping into a certain timeout. A connection that fails is retried only
// for the calls that are safe to repeat: reads, checks, updates,
// calculations, and sends that carry an id_externo.
//
// # Idempotent sends
//
// The service deduplicates sends by id_externo within the branch: a repeat
// of a send with the same id_externo and the same body does not issue a new
// document but answers with the one already stored (same clave and
// consecutivo, and its state as it is now); a repeat while the first is
// still being sent is a 503 with a Retry-After that grows with how long the
// document has been held (a second at first), which the client waits out
// to return the first send's answer (past RetryPolicy.MaxWait the caller
// gets ErrUnavailable and repeats later); a repeat with another body is a
// 400 on id_externo. So a send whose answer
// was lost can simply be sent again. A send without an id_externo is never
// repeated by the client after a connection failure, because the service
// would issue a second document.
package client
