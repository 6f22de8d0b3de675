package pipeline

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"facturad/hacienda"
	"facturad/hacienda/recepcion"
	"facturad/hacienda/registry"
	"facturad/hacienda/trust"
	"facturad/signer"
	"facturad/tenant"
)

// Store keeps the issued documents (tenant.DocumentStore; both store
// adapters satisfy it).
type Store interface {
	ReserveDocument(ctx context.Context, d *tenant.Document) error
	SaveDocument(ctx context.Context, d *tenant.Document) error
	DocumentByClave(ctx context.Context, clave string) (tenant.Document, error)
	DocumentStateByClave(ctx context.Context, clave string) (tenant.Document, error)
	DocumentByExternalID(ctx context.Context, branchID int64, idExterno string) (tenant.Document, error)
	ClaimDueDocuments(ctx context.Context, now, leaseUntil time.Time, limit int) ([]tenant.Document, error)
	ListDocuments(ctx context.Context, q tenant.ListQuery) ([]tenant.Document, error)
	// QuotaUse reads a company's monthly quota and what it has numbered
	// in the month of at (nil: no quota), for a replayed send's answer.
	QuotaUse(ctx context.Context, companyID int64, at time.Time) (*tenant.QuotaUse, error)
}

// Issuers gives the pipeline the issuing company's data and decides who
// may see a document (tenant.Service satisfies it).
type Issuers interface {
	// Issuer returns a company and one of its branches.
	Issuer(ctx context.Context, companyID, branchID int64) (tenant.Issuer, error)
	// HaciendaCredentials opens the company's tax-authority user and
	// password.
	HaciendaCredentials(ctx context.Context, companyID int64) (username string, password tenant.Secret, err error)
	// HaciendaCredentialsOf opens them from a company already read.
	HaciendaCredentialsOf(c tenant.Company) (username string, password tenant.Secret, err error)
	// AuthorizeDocument returns nil when p may see the documents of the
	// company (any of its branches'), tenant.ErrNotFound otherwise: the
	// rule ListCompany applies to the listings.
	AuthorizeDocument(ctx context.Context, p tenant.Principal, companyID int64) error
	// ListCompany returns the company whose documents p lists when it
	// names companiaID (0: none).
	ListCompany(ctx context.Context, p tenant.Principal, companiaID int64) (int64, error)
	// VisibleCompany returns a company p may read (secrets sealed),
	// tenant.ErrNotFound for one it may not.
	VisibleCompany(ctx context.Context, p tenant.Principal, id int64) (tenant.Company, error)
}

// Notices makes the tenant events the pipeline records (*tenant.Service
// satisfies it).
type Notices interface {
	// CredentialsRefusedEvent is the credenciales.rechazadas of the
	// company's credential stop beginning at since.
	CredentialsRefusedEvent(ctx context.Context, companyID int64, since time.Time) (*tenant.TenantEvent, error)
}

// Signer signs a document with the company's current certificate
// (*signer.Cache satisfies it). A certificate that is expired or not yet
// valid is an error wrapping signer.ErrCertificateExpired.
type Signer interface {
	Sign(ctx context.Context, companyID int64, xml []byte, opts ...signer.Option) ([]byte, error)
}

// Submitter talks to the tax authority's reception API and token service
// (*recepcion.Client satisfies it). CheckLogin logs in afresh, beside the
// company's session, for the connection test (see
// recepcion.Client.CheckLogin); a failure is a *recepcion.LoginError.
type Submitter interface {
	Submit(ctx context.Context, creds recepcion.Credentials, s recepcion.Submission) (recepcion.Receipt, error)
	Status(ctx context.Context, creds recepcion.Credentials, key string) (recepcion.Status, error)
	CheckLogin(ctx context.Context, creds recepcion.Credentials) error
}

// Limiter paces calls to the tax authority per key (one key per company).
// Wait blocks until a call may be made, or returns an error when ctx ends
// first. TokenBucket is the in-process implementation.
type Limiter interface {
	Wait(ctx context.Context, key string) error
}

// DefaultSubmitTimeout is Options.SubmitTimeout's default: how long a
// send call waits for the tax authority to take its document.
const DefaultSubmitTimeout = 15 * time.Second

// DefaultErrorFor is Options.ErrorFor's default: how long a document the
// tax authority answers with ind-estado "error" is asked about again before
// it ends in 03. Public clients treat "error" as final (none asks again
// about a document in it; docs/decisions-v44.md, decision 43); the hour
// only rides out a passing fault on the tax authority's side.
const DefaultErrorFor = time.Hour

// Options configure New: its dependencies (Store, Issuers, Signer and
// Submitter are required; the rest have defaults), what it trusts, how it
// issues, and its Capacity and Timings.
type Options struct {
	Store Store
	// Received keeps the received documents and the company's messages
	// about them (A.11); default: Store, when it keeps them too (both
	// store adapters do).
	Received tenant.ReceivedStore
	// Stops keeps the companies whose tax-authority credentials were
	// refused (default: Store, when it keeps them too, as both store
	// adapters do). Without it a stopped document waits for its company.
	Stops tenant.CredentialStopStore
	// Notices makes the tenant event that announces a company's
	// credential stop (credenciales.rechazadas); default: Issuers, when it
	// makes them too (tenant.Service does). Without it a stop is recorded
	// unannounced.
	Notices Notices
	Issuers Issuers
	Signer  Signer
	// Certificates gives the companies' signing certificates to the
	// connection test; default: Signer, when it gives them too
	// (*signer.Cache does).
	Certificates Certificates
	Submitter    Submitter
	// Environments are the clients of the tax authority's environments
	// (tenant.AmbientePruebas, AmbienteProduccion): a document is
	// submitted to, and asked about at, the environment it was numbered
	// in. One not listed, and every one when the map is empty (the
	// sandbox, where every company is on trial), goes to Submitter.
	Environments map[string]Submitter
	// Limiter paces the tax-authority calls of each company. Default: a
	// TokenBucket with DefaultRate and DefaultBurst.
	Limiter Limiter
	// Logger defaults to slog.Default(). Secrets are never logged.
	Logger *slog.Logger
	// Registerer receives the pipeline's collectors; default: a private
	// registry (nothing exported).
	Registerer prometheus.Registerer
	// Clock is the time of issue, of the backoff and of the leases;
	// default time.Now.
	Clock func() time.Time

	// Email says that accepted documents are mailed to their receptor:
	// the save that records an acceptance writes the e-mail to the outbox
	// (docs/design/delivery.md). False when no SMTP server is configured.
	Email bool

	// ProveedorSistemas is the software provider's identification written
	// in every document; empty means the issuing company's own.
	ProveedorSistemas string

	// CallbackBase, when set, is the public base URL of the API
	// (FACTURAD_PUBLIC_URL) under which the tax authority can reach the
	// callback route: every submission then carries a callbackUrl with a
	// per-document token, and a submitted document is asked about only
	// once its callback is late (CallbackWait), then every SafetyPoll at
	// most, as a net under the callback.
	CallbackBase string
	// CallbackKey keys the callback tokens (32 bytes; required with
	// CallbackBase).
	CallbackKey []byte
	// AnswerRoots are the certificate authorities the tax authority's
	// signed answers (MensajeHacienda) must chain to. Nil checks each
	// answer's signature and what it is about, but not who signed it.
	// Answers may commit to any signature policy or none (the tax
	// authority signs XAdES-BES): trust rests on these roots and on
	// AnswerSigner, never on the policy.
	AnswerRoots *x509.CertPool
	// AnswerIntermediates are authorities an answer's chain may pass
	// through that the answer does not carry (the national PKI's).
	AnswerIntermediates *x509.CertPool
	// AnswerSigner, when set, is the identification number (digits, as
	// signer.CertificateIdentification reads it) an answer's signing
	// certificate must carry: the Ministerio de Hacienda's
	// (trust.MinistryIdentification) for the real service. The national
	// PKI issues certificates to every taxpayer, so the roots alone do not
	// tell the tax authority's answer from a taxpayer's forgery.
	AnswerSigner string
	// SupplierPKI, when set, is the national PKI a supplier's signing
	// certificate is checked against (staging and production): one that
	// chains to it is trusted as such; one that names one of its
	// authorities as issuer but does not chain is refused; one issued
	// outside it (the tax authority's own "llave criptográfica", whose
	// authorities are not published) rests on the tax authority's
	// acceptance of the document, which Receive asks for before it
	// answers. Nil checks the signature and the signer's identification
	// only.
	SupplierPKI *trust.National
	// Emission bounds a caller's fecha_emision around the time the send is
	// received (each zero field takes hacienda.DefaultEmissionWindow's).
	Emission hacienda.EmissionWindow
	// Registry, when set, is asked before a document is numbered: the
	// checks of A.13 under RegistryChecks (or the company's own policy),
	// and the exchange rate of a document in another currency that
	// omits it. Nil: no registry is asked, and such a document must
	// carry its rate.
	Registry Registry
	// RegistryChecks is the service's policy for the checks (default
	// registry.PolicyRefuse); a company's ValidacionesRegistro overrides
	// it.
	RegistryChecks registry.Policy
	// DisableRetrier leaves the background worker off (for tests that
	// drive it by hand with RunDue).
	DisableRetrier bool

	// Capacity and Timings have defaults for every zero field.
	Capacity
	Timings
}

// Registry is what the send asks of the tax authority's registries
// (*registry.Registry satisfies it).
type Registry interface {
	Check(ctx context.Context, doc *hacienda.Document) []registry.Finding
	Rate(ctx context.Context, moneda string, day time.Time) (registry.Rate, registry.Meta, error)
}

// Capacity bounds how much the pipeline works on at once.
type Capacity struct {
	// Workers is how many documents of one branch are worked on at once
	// (default 8); QueueSize how many more may wait (default 64). A send
	// that finds its branch's lane full is refused with an *OverloadError.
	Workers   int
	QueueSize int
	// MaxInFlight bounds the send calls admitted over every branch at once
	// (default 2048), so that many busy branches together cannot pile up
	// work either.
	MaxInFlight int
	// Signers is how many documents are signed at once, over every
	// branch, the branches waiting taking turns (default GOMAXPROCS: a
	// signature is pure CPU).
	Signers int
	// MaxInFlightPerCompany bounds the send calls admitted for one company
	// over all its branches (default MaxInFlight/4, at least 1), so that
	// one company's many branches cannot fill MaxInFlight and keep every
	// other company out. A send past it is refused with an *OverloadError.
	MaxInFlightPerCompany int
	// OverloadRetryAfter is the Retry-After of a refusal (default 1s).
	OverloadRetryAfter time.Duration
	// RetryWorkers is how many rows the background worker works on at once
	// (default 32: the calls mostly wait for the tax authority, and the
	// limiter paces each company); RetryBatch how many it claims at once
	// (default 32), never more than free workers, so that each claimed row
	// starts at once.
	RetryWorkers int
	RetryBatch   int
}

// Timings are the pipeline's waits, timeouts and leases.
type Timings struct {
	// SubmitTimeout bounds the synchronous submission of a send call
	// (default DefaultSubmitTimeout); the tax-authority client's own
	// timeout applies inside it.
	SubmitTimeout time.Duration
	// StoreTimeout bounds each store write made after the caller's context
	// may have ended (default 10s): a document is stored whatever happened
	// to the request.
	StoreTimeout time.Duration

	// RetryInterval is how often the background worker looks for due
	// documents when it found none (default 100 ms: claims stay small and
	// spread, instead of a second's worth of status calls at once); Lease
	// how long a claimed document is kept from other replicas (default 2m,
	// or 30s more than an attempt when that is longer). Lease must exceed
	// what one document's attempt may take, 2×SubmitTimeout +
	// StoreTimeout.
	RetryInterval time.Duration
	Lease         time.Duration
	// BackoffBase and BackoffMax bound the exponential backoff between
	// attempts (defaults 2s and 10m); every delay gets a random jitter of
	// up to half its length.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// CredentialsProbe is how long after a company's credentials were
	// refused the background worker tries them again with one of its
	// stopped documents (default 5m, the tax-authority client's
	// RefusedCredentialsWait); each later probe waits twice as long, up to
	// CredentialsProbeMax (default 1h).
	CredentialsProbe    time.Duration
	CredentialsProbeMax time.Duration
	// PollDelay is how long after a submission the tax authority is first
	// asked for its verdict (default 3s); later asks back off.
	PollDelay time.Duration
	// PollFor is how long after its submission the background worker keeps
	// asking for a document's verdict (default 7 days). A document the tax
	// authority leaves procesando longer stays 04 with a note; a check call
	// still asks for it.
	PollFor time.Duration
	// InFlightGrace is how long a stored, signed document whose send call
	// is still running is left alone by the background worker (default:
	// SubmitTimeout + 30s). A crash in that window is recovered afterwards.
	InFlightGrace time.Duration
	// ErrorFor is how long after its submission a document the tax
	// authority answers with ind-estado "error" (a processing error on its
	// side, not a verdict) is asked about again, with backoff, before it
	// ends in 03 (default DefaultErrorFor, 1h).
	ErrorFor time.Duration
	// InFlightMargin is how long after the deadline of a submission that
	// timed out the tax authority is first asked about it (default 30s):
	// until then the request may still reach it, and a status query would
	// find nothing and lead to a second submission.
	InFlightMargin time.Duration
	// CallbackWait is, with callbacks on, how long after its submission a
	// document waits for its callback before the background worker asks
	// the tax authority itself (default DefaultCallbackWait, less a jitter
	// of up to a third): a callback that has not come by then is taken as
	// lost. A non-final answer is asked about again with backoff from
	// there, doubling up to SafetyPoll.
	CallbackWait time.Duration
	// SafetyPoll is, with callbacks on, the longest wait between two asks
	// about a document that is not final (default 10m).
	SafetyPoll time.Duration
}

// DefaultCallbackWait is how long a submitted document waits for its
// callback before it is asked about. The tax authority judges most
// documents within seconds and calls back at once, retrying three times a
// second apart (spec §15.5): a callback not in after 90 s is lost, and a
// document then costs a poll a minute to a minute and a half after its
// submission instead of sitting in 04 until the safety net.
const DefaultCallbackWait = 90 * time.Second

func (o *Options) setDefaults() error {
	switch {
	case o.Store == nil:
		return errors.New("pipeline: Options.Store is required")
	case o.Issuers == nil:
		return errors.New("pipeline: Options.Issuers is required")
	case o.Signer == nil:
		return errors.New("pipeline: Options.Signer is required")
	case o.Submitter == nil:
		return errors.New("pipeline: Options.Submitter is required")
	}
	if o.Certificates == nil {
		cs, ok := o.Signer.(Certificates)
		if !ok {
			return errors.New("pipeline: Options.Certificates is required when the Signer does not give certificates")
		}
		o.Certificates = cs
	}
	if o.Received == nil {
		if rs, ok := o.Store.(tenant.ReceivedStore); ok {
			o.Received = rs
		}
	}
	if o.Stops == nil {
		if cs, ok := o.Store.(tenant.CredentialStopStore); ok {
			o.Stops = cs
		}
	}
	if o.Notices == nil {
		if n, ok := o.Issuers.(Notices); ok {
			o.Notices = n
		}
	}
	if o.Limiter == nil {
		o.Limiter = NewTokenBucket(DefaultRate, DefaultBurst)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	setInt := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	setDur := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	setInt(&o.Workers, 8)
	if o.QueueSize < 0 {
		return errors.New("pipeline: negative QueueSize")
	}
	if o.QueueSize == 0 {
		o.QueueSize = 64
	}
	setInt(&o.MaxInFlight, 2048)
	setInt(&o.Signers, runtime.GOMAXPROCS(0))
	setInt(&o.MaxInFlightPerCompany, max(1, o.MaxInFlight/4))
	setDur(&o.OverloadRetryAfter, time.Second)
	setDur(&o.SubmitTimeout, DefaultSubmitTimeout)
	setDur(&o.StoreTimeout, 10*time.Second)
	setDur(&o.RetryInterval, 100*time.Millisecond)
	setInt(&o.RetryBatch, 32)
	setInt(&o.RetryWorkers, 32)
	need := 2*o.SubmitTimeout + o.StoreTimeout // one attempt of the background worker, at most
	setDur(&o.Lease, max(2*time.Minute, need+30*time.Second))
	setDur(&o.BackoffBase, 2*time.Second)
	setDur(&o.BackoffMax, 10*time.Minute)
	setDur(&o.CredentialsProbe, 5*time.Minute)
	setDur(&o.CredentialsProbeMax, time.Hour)
	setDur(&o.PollDelay, 3*time.Second)
	setDur(&o.PollFor, 7*24*time.Hour)
	setDur(&o.InFlightGrace, min(o.SubmitTimeout+30*time.Second, o.Lease))
	setDur(&o.InFlightMargin, 30*time.Second)
	setDur(&o.ErrorFor, DefaultErrorFor)
	setDur(&o.SafetyPoll, 10*time.Minute)
	setDur(&o.CallbackWait, min(DefaultCallbackWait, o.SafetyPoll))
	if o.CallbackBase != "" && len(o.CallbackKey) < 32 {
		return errors.New("pipeline: CallbackKey of at least 32 bytes is required with CallbackBase")
	}
	ew := hacienda.DefaultEmissionWindow()
	setDur(&o.Emission.Ahead, ew.Ahead)
	setDur(&o.Emission.Behind, ew.Behind)
	setDur(&o.Emission.Offline, ew.Offline)
	if o.Lease <= need {
		return fmt.Errorf("pipeline: Lease %s does not cover one attempt (2×SubmitTimeout + StoreTimeout = %s)", o.Lease, need)
	}
	if o.CredentialsProbeMax < o.CredentialsProbe {
		return errors.New("pipeline: CredentialsProbeMax is shorter than CredentialsProbe")
	}
	if o.SafetyPoll < o.CallbackWait {
		return errors.New("pipeline: SafetyPoll is shorter than CallbackWait")
	}
	if o.BackoffMax < o.BackoffBase {
		return errors.New("pipeline: BackoffMax is shorter than BackoffBase")
	}
	return nil
}
