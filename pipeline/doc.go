// Package pipeline issues documents: it runs the send call of the contract
// (validate and calculate, number, build the XML, sign, store, submit) in
// bounded per-branch lanes, answers the check call by asking the tax
// authority, and keeps a background worker that resubmits documents the tax
// authority did not take and settles the ones it has not judged yet.
//
// The package declares the small interfaces it consumes (Store, Issuers,
// Signer, Submitter, Limiter); tenant's stores and Service, signer's Cache
// and recepcion's Client satisfy them. Failures of the tax authority are
// classified once, in hacienda/recepcion; this package turns that
// classification into a document state and the answer of the send call.
//
// The design is described in docs/design/pipeline.md.
package pipeline
