package tenant

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/api"
)

// The tenant events' occasions and checks (A.14; docs/design/
// tenant-events.md). The Service decides when there is an occasion and
// what the event says; the store records each occasion once
// (TenantEventStore), which is what keeps two replicas, or a restart, from
// announcing one twice, whatever checks them and however often.

// NewEventID is a random event id (130 bits), which receivers use to tell
// a repeated delivery: the same for every delivery of one event.
func NewEventID() string { return "evt_" + rand.Text() }

// The certificate's stages, in days left.
const (
	certificateFirstNotice  = 30 * 24 * time.Hour
	certificateSecondNotice = 7 * 24 * time.Hour
)

// StuckAfter is how long after it was numbered an unsettled document is
// stuck (documentos.detenidos).
const StuckAfter = time.Hour

// CertificateOccasion is the event a certificate expiring at expiry calls
// for at now, and its occasion: certificado.vencido once it has expired,
// certificado.por_vencer "7d:<expiry>" with 7 days or fewer left,
// "30d:<expiry>" with 30 or fewer; no name with more. A certificate first
// seen with 5 days left gets the 7-day notice only. The expiry in the
// occasion makes a new certificate's stages occasions of their own.
func CertificateOccasion(expiry, now time.Time) (name, occasion string) {
	if expiry.IsZero() {
		return "", ""
	}
	at := expiry.UTC().Format(time.RFC3339Nano)
	left := expiry.Sub(now)
	switch {
	case left <= 0:
		return EventCertificateExpired, at
	case left <= certificateSecondNotice:
		return EventCertificateExpiring, "7d:" + at
	case left <= certificateFirstNotice:
		return EventCertificateExpiring, "30d:" + at
	}
	return "", ""
}

// eventStore is the store's tenant events; a store without them is an
// error.
func (s *Service) eventStore() (TenantEventStore, error) {
	es, ok := s.store.(TenantEventStore)
	if !ok {
		return nil, errors.New("tenant: the store keeps no tenant events")
	}
	return es, nil
}

// noticeAddresses are the addresses a company's notices are mailed to:
// its CorreoNotificaciones (";" between them, as validated), none when
// e-mail is off.
func (s *Service) noticeAddresses(correo string) []string {
	if !s.noticeEmail {
		return nil
	}
	var out []string
	for _, a := range strings.Split(correo, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// companyFacts is what a tenant event says of its company.
type companyFacts struct {
	id                                        int64
	numero, razonSocial, ambiente, notifyMail string
}

func factsOf(c Company) companyFacts {
	return companyFacts{c.ID, c.NumeroIdentificacion, c.RazonSocial, c.Ambiente, c.CorreoNotificaciones}
}

// newEvent is a tenant event of name about the company, with its data
// (the company and what set fills in) rendered for the occasions recorded.
func (s *Service) newEvent(f companyFacts, name string, occasions []string, set func(d *api.TenantEventData, recorded []string)) TenantEvent {
	return TenantEvent{
		CompanyID: f.id,
		Name:      name,
		ID:        NewEventID(),
		Created:   s.now(),
		Occasions: occasions,
		Email:     s.noticeAddresses(f.notifyMail),
		Payload: func(recorded []string) ([]byte, error) {
			d := api.TenantEventData{CompaniaID: f.id, NumeroIdentificacion: f.numero, RazonSocial: f.razonSocial, Ambiente: f.ambiente}
			if set != nil {
				set(&d, recorded)
			}
			return json.Marshal(d)
		},
	}
}

// certificateEvent is the event a company's certificate calls for at now,
// if any.
func (s *Service) certificateEvent(f companyFacts, expiry, now time.Time) (TenantEvent, bool) {
	name, occasion := CertificateOccasion(expiry, now)
	if name == "" {
		return TenantEvent{}, false
	}
	return s.newEvent(f, name, []string{occasion}, func(d *api.TenantEventData, _ []string) {
		d.ExpiracionCertificado = api.LocalTime(expiry)
	}), true
}

// announceCertificate records the event a certificate just stored calls
// for (one stored with 10 days left is announced at once). The store's
// write stands even should this fail: the hourly check announces it then.
func (s *Service) announceCertificate(ctx context.Context, c Company) {
	if !c.Activo {
		return
	}
	ev, ok := s.certificateEvent(factsOf(c), c.CertificateExpiry, s.now())
	if !ok {
		return
	}
	es, err := s.eventStore()
	if err == nil {
		_, err = es.RecordTenantEvent(ctx, ev)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "announce a certificate stored", "company", c.ID, "evento", ev.Name, "err", err)
		return
	}
	s.log.InfoContext(ctx, "tenant event", "company", c.ID, "evento", ev.Name)
}

// CredentialsRefusedEvent is the credenciales.rechazadas of the company's
// credential stop beginning at since, for CredentialStopStore.
// StopOnCredentials to record if the stop is new (pipeline.Notices).
func (s *Service) CredentialsRefusedEvent(ctx context.Context, companyID int64, since time.Time) (*TenantEvent, error) {
	c, err := s.store.Company(ctx, companyID)
	if err != nil {
		return nil, fmt.Errorf("credentials refused event: %w", err)
	}
	ev := s.newEvent(factsOf(c), EventCredentialsRefused, []string{since.UTC().Format(time.RFC3339Nano)}, nil)
	return &ev, nil
}

// sweepPage is how many rows a sweep reads at a time.
const sweepPage = 500

// SweepCertificates announces what the active companies' certificates
// call for at now: every company whose certificate has 30 days or fewer
// left or has expired gets the event of its stage, once per stage
// (CertificateOccasion). Run at start and at least hourly (tenant/sweep).
// It returns how many events it recorded.
func (s *Service) SweepCertificates(ctx context.Context, now time.Time) (int, error) {
	es, err := s.eventStore()
	if err != nil {
		return 0, err
	}
	q := CertificateQuery{Before: now.Add(certificateFirstNotice + time.Microsecond), Limit: sweepPage}
	n := 0
	for {
		page, err := es.ExpiringCertificates(ctx, q)
		if err != nil {
			return n, err
		}
		for _, c := range page {
			f := companyFacts{c.CompanyID, c.NumeroIdentificacion, c.RazonSocial, c.Ambiente, c.CorreoNotificaciones}
			ev, ok := s.certificateEvent(f, c.Expiry, now)
			if !ok {
				continue
			}
			recorded, err := es.RecordTenantEvent(ctx, ev)
			if err != nil {
				return n, err
			}
			if len(recorded) > 0 {
				n++
				s.log.InfoContext(ctx, "tenant event", "company", c.CompanyID, "evento", ev.Name)
			}
		}
		if len(page) < q.Limit {
			return n, nil
		}
		k := page[len(page)-1].ListKey()
		q.After = &k
	}
}

// SweepStuckDocuments announces the documents still unsettled an hour
// after they were numbered that no documentos.detenidos named yet: one
// event per company, naming up to api.MaxTenantEventClaves of them (the
// oldest) in claves and counting all in cantidad. It reads at most
// MaxStuckScan documents per sweep, the oldest first; each is announced
// once, so the next sweep goes on where this one stopped. It returns how
// many events it recorded.
func (s *Service) SweepStuckDocuments(ctx context.Context, now time.Time) (int, error) {
	es, err := s.eventStore()
	if err != nil {
		return 0, err
	}
	q := StuckQuery{NumberedBefore: now.Add(-StuckAfter), Unannounced: true, Limit: sweepPage}
	type company struct {
		facts  companyFacts
		claves []string
	}
	var (
		order []int64
		byID  = map[int64]*company{}
		read  int
	)
	for read < MaxStuckScan {
		q.Limit = min(sweepPage, MaxStuckScan-read)
		page, err := es.StuckDocuments(ctx, q)
		if err != nil {
			return 0, err
		}
		read += len(page)
		for _, d := range page {
			c := byID[d.CompanyID]
			if c == nil {
				c = &company{facts: companyFacts{d.CompanyID, d.NumeroIdentificacion, d.RazonSocial, d.Ambiente, d.CorreoNotificaciones}}
				byID[d.CompanyID] = c
				order = append(order, d.CompanyID)
			}
			if d.Clave != "" {
				c.claves = append(c.claves, d.Clave)
			}
		}
		if len(page) < q.Limit {
			break
		}
		k := page[len(page)-1].ListKey()
		q.After = &k
	}
	n := 0
	for _, id := range order {
		c := byID[id]
		if len(c.claves) == 0 {
			continue
		}
		ev := s.newEvent(c.facts, EventDocumentsStuck, c.claves, func(d *api.TenantEventData, recorded []string) {
			d.Claves = recorded[:min(len(recorded), api.MaxTenantEventClaves)]
			d.Cantidad = len(recorded)
		})
		recorded, err := es.RecordTenantEvent(ctx, ev)
		if err != nil {
			return n, err
		}
		if len(recorded) > 0 {
			n++
			s.log.InfoContext(ctx, "tenant event", "company", id, "evento", ev.Name, "documents", len(recorded))
		}
	}
	return n, nil
}

// CostaRicaMidnight is the start of the Costa Rica day y-m-d.
func CostaRicaMidnight(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, hacienda.CostaRica)
}

// operatorScope is the owner whose companies p lists in the operators'
// lists: every company for an admin (0), its own for a reseller; anyone
// else gets ErrNotFound, as for a route that is not theirs.
func operatorScope(p Principal) (int64, error) {
	switch {
	case p.Role == RoleAdmin:
		return 0, nil
	case p.Role == RoleReseller && p.UserID != 0:
		return p.UserID, nil
	}
	return 0, ErrNotFound
}

// ExpiringCertificates returns a page of the active companies p manages
// whose certificate expires strictly before before, by expiry then id:
// GET /api/admin/certificados/v4, whose before is Costa Rica midnight of
// the day asked (CostaRicaMidnight).
func (s *Service) ExpiringCertificates(ctx context.Context, p Principal, before time.Time, after *ListKey, limit int) ([]CompanyCertificate, error) {
	owner, err := operatorScope(p)
	if err != nil {
		return nil, err
	}
	es, err := s.eventStore()
	if err != nil {
		return nil, err
	}
	return es.ExpiringCertificates(ctx, CertificateQuery{Before: before, OwnerID: owner, After: after, Limit: limit})
}

// StuckDocuments returns a page of the documents of the companies p
// manages still unsettled an hour after they were numbered, the oldest
// first: GET /api/admin/documentos-detenidos/v4.
func (s *Service) StuckDocuments(ctx context.Context, p Principal, after *ListKey, limit int) ([]StuckDocument, error) {
	owner, err := operatorScope(p)
	if err != nil {
		return nil, err
	}
	es, err := s.eventStore()
	if err != nil {
		return nil, err
	}
	return es.StuckDocuments(ctx, StuckQuery{NumberedBefore: s.now().Add(-StuckAfter), OwnerID: owner, After: after, Limit: limit})
}
