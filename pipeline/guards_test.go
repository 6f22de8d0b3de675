package pipeline

import (
	"facturad/hacienda/recepcion"
	"facturad/signer"
	"facturad/tenant"
	"facturad/tenant/postgres"
	"facturad/tenant/sqlite"
)

// What cmd/facturad wires into Options satisfies the interfaces the
// pipeline declares.
var (
	_ Store                    = (*sqlite.Store)(nil)
	_ Store                    = (*postgres.Store)(nil)
	_ Issuers                  = (*tenant.Service)(nil)
	_ Signer                   = (*signer.Cache)(nil)
	_ Certificates             = (*signer.Cache)(nil)
	_ Submitter                = (*recepcion.Client)(nil)
	_ Limiter                  = (*TokenBucket)(nil)
	_ signer.CertificateSource = (*tenant.Service)(nil)
)
