package tenant

import "log/slog"

// Secret is a secret value in memory: a certificate file, a PIN, a password.
// It is a byte slice so that callers can clear it, and it prints as
// "[redacted]" through fmt and slog so that it cannot leak into a log line by
// accident. Use the bytes directly when the value is needed.
type Secret []byte

// String redacts the value.
func (s Secret) String() string {
	if len(s) == 0 {
		return ""
	}
	return "[redacted]"
}

// GoString redacts the value for %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue redacts the value for slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Purposes of the sealed secrets. Each is bound into its sealed value as
// associated data, so a value sealed for one purpose does not open as
// another.
const (
	PurposeHaciendaPassword = "hacienda-password"
	PurposeCertificate      = "certificate"
	PurposeCertificatePIN   = "certificate-pin"
)

// Sealer encrypts secrets at rest for one company and purpose (tenant/seal
// implements it). Open must fail for a value sealed with another company id
// or purpose. Sealing an empty value gives an empty value and opening an
// empty value gives nil.
type Sealer interface {
	Seal(companyID int64, purpose string, plaintext []byte) ([]byte, error)
	Open(companyID int64, purpose string, sealed []byte) ([]byte, error)
}
