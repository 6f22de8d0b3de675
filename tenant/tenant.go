// Package tenant holds the tenants' data and its rules: companies, their
// branches, the API users that act for them, and the Store contract that the
// adapters in tenant/postgres and tenant/sqlite implement.
//
// The package knows nothing of HTTP. The gateway turns requests into calls on
// a Service, and the Service enforces roles, tenant isolation, credential
// generation and the encryption of secrets before anything reaches a Store.
package tenant

import (
	"errors"
	"time"
)

// Errors callers branch on. The gateway maps them to HTTP status codes.
var (
	// ErrNotFound means the record does not exist or belongs to another
	// tenant: both answer the same so that ids cannot be probed.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique value (a user name, a branch code) is taken.
	ErrConflict = errors.New("conflict")
	// ErrUnauthenticated means the AuthToken and Basic pair did not verify.
	ErrUnauthenticated = errors.New("unauthenticated")
)

// Role is what an API user may do.
type Role string

// The three roles of the contract.
const (
	RoleAdmin    Role = "admin"    // platform operator; everything
	RoleReseller Role = "reseller" // owns the companies it creates
	RoleBranch   Role = "branch"   // one branch of one company
)

// Company is a taxpayer that issues documents through the service. The
// secret fields hold sealed (encrypted) bytes, never plain text.
type Company struct {
	ID      int64
	OwnerID int64 // API user id of the reseller that created it; 0 when an admin did

	TipoIdentificacion     string // 01 física, 02 jurídica, 03 DIMEX, 04 NITE
	NumeroIdentificacion   string
	RazonSocial            string
	ActividadComercial     string
	TipoCliente            string
	RazonComercial         string
	Provincia              string
	Canton                 string
	Distrito               string
	Barrio                 string
	OtrasSenas             string
	CodPais                string
	Telefono               string
	Fax                    string
	CorreoElectronico      string
	MonedaLocal            string
	MonedaExtranjera       string
	FacturacionElectronica bool
	Activo                 bool

	UsuarioHacienda string

	// ValidacionesRegistro is how a send is checked against the tax
	// authority's registries (A.13): a registry.Policy
	// (refuse, warn, off), or "" for the service's setting.
	ValidacionesRegistro string

	// Ambiente is the tax authority's environment the company issues in
	// (AmbientePruebas or AmbienteProduccion, A.14); its documents go to
	// that environment's endpoints and are numbered apart from the other's.
	Ambiente string
	// CuotaMensual is how many documents the company may have numbered in
	// a Costa Rica calendar month; nil is no limit.
	CuotaMensual *int64
	// CorreoNotificaciones is the address the notices about the company
	// itself (certificate expiring, credentials refused...) are mailed to;
	// empty is none.
	CorreoNotificaciones string

	// NotasImpresas are the company's free notes printed on its documents
	// (bank accounts, a return policy), up to MaxNotasImpresas characters,
	// lines apart; empty is none.
	NotasImpresas string
	// HasLogo is set by the reads when the company has a logo. The reads
	// of companies do not carry the image itself (CompanyPrintStore reads
	// it for the printed documents).
	HasLogo bool
	// Logo is a logo to store (a PNG or JPEG checked by pdf.ParseLogo):
	// CreateCompany stores it, UpdateCompany stores it when ReplaceLogo
	// is set (nil then removes the stored one) and keeps the stored one
	// otherwise. The reads leave it nil.
	Logo        []byte
	ReplaceLogo bool

	// Sealed secrets (see Sealer): the tax-authority password, the .p12 file
	// and its PIN. Empty when not set.
	SealedContrasenaHacienda []byte
	SealedCertificate        []byte
	SealedCertificatePIN     []byte

	// CertificateExpiry is the NotAfter of the signing certificate; zero when
	// the company has no certificate.
	CertificateExpiry time.Time
	// CertificateVersion grows by one each time a certificate is uploaded, so
	// that caches on every replica can tell a stale parsed key cheaply. The
	// store steps it in the write that stores the certificate (see
	// Store.UpdateCompany), so no two uploads share a version.
	CertificateVersion int64

	CreatedAt time.Time
	UpdatedAt time.Time
}

// The tax authority's environments a company may issue in (A.14). The
// tax authority issues credentials and certificates per environment and
// numbers each apart.
const (
	AmbientePruebas    = "pruebas"    // its staging environment
	AmbienteProduccion = "produccion" // the real one
)

// CertificateExpired reports whether the company's certificate is missing or
// past its expiry at now.
func (c Company) CertificateExpired(now time.Time) bool {
	return c.CertificateExpiry.IsZero() || !now.Before(c.CertificateExpiry)
}

// Branch is one sucursal of a company. Its 3-digit Sucursal code is part of
// every consecutivo it issues.
type Branch struct {
	ID        int64
	CompanyID int64

	Sucursal            string // 3 digits
	RazonComercial      string
	Provincia           string
	Canton              string
	Distrito            string
	Barrio              string
	OtrasSenas          string
	CodPais             string
	Telefono            string
	Fax                 string
	CorreoElectronico   string
	MonedaLocal         string
	MonedaExtranjera    string
	VerMonedaExtranjera bool
	Licencia            string
	Activo              bool

	CreatedAt time.Time
	UpdatedAt time.Time
}

// APIUser is a credential pair (user name + password, and an API token) that
// acts with a role. Passwords are stored as slow hashes and tokens as SHA-256
// digests; neither is ever stored or logged in plain text.
type APIUser struct {
	ID           int64
	Username     string
	PasswordHash string // encoded slow hash (see HashPassword)
	TokenHash    []byte // SHA-256 of the API token, 32 bytes
	Role         Role
	CompanyID    int64 // 0 for admin and reseller
	BranchID     int64 // 0 for admin and reseller
	Activo       bool
	CreatedAt    time.Time
}

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID    int64
	Username  string
	Role      Role
	CompanyID int64 // set for RoleBranch
	BranchID  int64 // set for RoleBranch
}

// CompanyQuery selects companies for a search.
type CompanyQuery struct {
	// NameKey is a folded (FoldName) substring of the legal name; empty
	// matches every company.
	NameKey string
	// OwnerID, when not nil, keeps only the companies of that reseller.
	OwnerID *int64
	// CompanyID, when not zero, keeps only that company.
	CompanyID int64
	// Limit caps the result; the store never returns more than 100.
	Limit int
}
