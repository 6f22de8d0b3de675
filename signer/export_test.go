package signer

// ReadPlainXML is readPlainXML, for the external tests.
var ReadPlainXML = readPlainXML
