// Package recepcion is the client of the tax authority's token service and
// reception API (Ministerio de Hacienda, comprobantes electrónicos v4.4).
//
// A Client keeps one OAuth2 session per company: it logs in with the
// company's tax-authority user and password (password grant), refreshes the
// access token before it expires (refresh grant), logs in again when the
// refresh token has expired, and coalesces concurrent refreshes so that any
// number of simultaneous calls for one company fetch a single token. A 401
// from the reception API drops the token and the call is tried once more.
//
// Submit posts a signed document (POST {base}/recepcion) and Status asks for
// its state (GET {base}/recepcion/{clave}), with the signed MensajeHacienda
// answer read once by signer.Parse and hacienda.ReadMensajeHacienda (kept
// in Status.Answer, for checking its signature without reading it again).
// CheckLogin logs in afresh, beside the company's session, for a connection
// test: it tells refused credentials, in the token service's own words,
// from a token service that cannot be reached (LoginError).
//
// Every failure is classified once, here: an *APIError when the tax
// authority answered with a status that is not a success, a *TransportError
// when it did not answer in a readable way, and Judge turns either into the
// one Verdict callers act on: Refused, BadCredentials, Broken or Transient,
// whether the request may have been received (MaybeReceived: ask Status
// before submitting the same clave again) or may still be on its way
// (InFlight), and the wait the tax authority asked for. Nothing above this
// package reads an HTTP status.
package recepcion
