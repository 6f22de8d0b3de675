// Package api holds the JSON bodies of facturad's own public API (contract
// version 4; the tax authority's reception API is hacienda/recepcion's),
// each with the contract's exact names: the company, branch and API-user
// calls' requests and answers, the Document and received-document answers,
// the listings' query and pages, the webhook calls and the deliveries'
// envelope, the e-mails' record and the error bodies; and the decoding of
// the request bodies the contract reads without regard to the case of
// their names.
//
// It is the one home of these shapes. The gateway decodes and answers
// with them, the delivery events carry the Document and received-document
// answers as their data, the Go client (gateway/client) re-exports them,
// and the tests hold the OpenAPI document to them, so that a name of the
// contract is written once.
//
// The document bodies (the send and calculate requests and the calculate
// answer) are the v4.4 model of package hacienda, which the calculation
// and validation consume and produce: they are not repeated here.
//
// Like hacienda, it is a leaf that every package may import: it imports
// only hacienda, hacienda/xmltext and the standard library, so that the
// pipeline can write the events' data with it and the client can use it
// without bringing the server (fasthttp, the stores, the pipeline) into an
// integrator's build.
package api
