// Package buildertest holds only tests: it signs documents made by the
// hacienda package's XML builder and checks them with xmlsec1 and the
// official schemas. It is a package of its own so that the signer's own
// tests never depend on the document engine compiling.
package buildertest
