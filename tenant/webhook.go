package tenant

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"facturad/hacienda/msg"
)

// PurposeWebhookSecret is the associated data of a sealed webhook secret.
const PurposeWebhookSecret = "webhook-secret"

// WebhookURLChecker decides whether a company may register a URL (server-
// side request forgery; pipeline/delivery.URLPolicy satisfies it). The
// error's text is shown to the caller on the url field.
type WebhookURLChecker interface {
	CheckWebhookURL(ctx context.Context, raw string) error
}

// WebhookInput is a webhook registration (A.12).
type WebhookInput struct {
	URL     string
	Eventos []string
}

// maxWebhooks bounds a company's webhooks: each is a delivery per event,
// written in the save of every change of estado, and a row the deliverers'
// claims scan. The store enforces it (WebhookStore.CreateWebhook).
const maxWebhooks = 10

// DeliveryLogLimit is the most deliveries one page of the log returns.
const DeliveryLogLimit = 100

// companyWebhooks returns the store's webhooks for a call about a
// company's, once p may see the company: the company is read, so that one
// that does not exist is 404 for an admin too, as on the company's other
// routes. A store that keeps no webhooks is an error.
func (s *Service) companyWebhooks(ctx context.Context, p Principal, companyID int64) (WebhookStore, error) {
	ws, ok := s.store.(WebhookStore)
	if !ok {
		return nil, errors.New("tenant: the store keeps no webhooks")
	}
	if _, err := s.companyFor(ctx, p, companyID); err != nil {
		return nil, err
	}
	return ws, nil
}

// CreateWebhook registers a company's webhook and returns it with its
// signing secret, shown this once and stored sealed. Unknown event names
// are a validation error on eventos, a URL the checker refuses one on url.
func (s *Service) CreateWebhook(ctx context.Context, p Principal, companyID int64, in WebhookInput) (Webhook, string, error) {
	ws, err := s.companyWebhooks(ctx, p, companyID)
	if err != nil {
		return Webhook{}, "", err
	}
	ve := newValidationError()
	in.URL = strings.TrimSpace(in.URL)
	switch {
	case in.URL == "":
		ve.Add("url", msg.Required.With())
	case s.webhookURLs == nil:
		ve.Add("url", msg.WebhooksUnavailable.With())
	default:
		if err := s.webhookURLs.CheckWebhookURL(ctx, in.URL); err != nil {
			m, ok := msg.Of(err)
			if !ok {
				return Webhook{}, "", fmt.Errorf("check webhook url: %w", err)
			}
			ve.Add("url", m)
		}
	}
	known := EventNames()
	var eventos []string
	if len(in.Eventos) == 0 {
		ve.Add("eventos", msg.EventsRequired.With(strings.Join(known, ", ")))
	}
	for _, e := range in.Eventos {
		e = strings.TrimSpace(e)
		switch {
		case !slices.Contains(known, e):
			ve.Add("eventos", msg.EventUnknown.With(truncateValue(e), strings.Join(known, ", ")))
		case !slices.Contains(eventos, e):
			eventos = append(eventos, e)
		}
	}
	if err := ve.orNil(); err != nil {
		return Webhook{}, "", err
	}
	secret := "whsec_" + rand.Text() + rand.Text()
	sealed, err := s.sealer.Seal(companyID, PurposeWebhookSecret, []byte(secret))
	if err != nil {
		return Webhook{}, "", fmt.Errorf("seal the webhook secret: %w", err)
	}
	w := Webhook{CompanyID: companyID, URL: in.URL, Eventos: eventos, SealedSecret: sealed}
	// The store counts and inserts in one step, so that creates at once
	// cannot pass the cap together.
	if err := ws.CreateWebhook(ctx, &w, maxWebhooks); err != nil {
		if errors.Is(err, ErrWebhookLimit) {
			return Webhook{}, "", invalidField("url", msg.WebhooksMax.With(maxWebhooks))
		}
		return Webhook{}, "", err
	}
	return w, secret, nil
}

// truncateValue shortens a caller's value quoted in an error.
func truncateValue(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Webhooks lists a company's webhooks (without their secrets).
func (s *Service) Webhooks(ctx context.Context, p Principal, companyID int64) ([]Webhook, error) {
	ws, err := s.companyWebhooks(ctx, p, companyID)
	if err != nil {
		return nil, err
	}
	return ws.Webhooks(ctx, companyID)
}

// DeleteWebhook removes a company's webhook with its deliveries.
func (s *Service) DeleteWebhook(ctx context.Context, p Principal, companyID, id int64) error {
	ws, err := s.companyWebhooks(ctx, p, companyID)
	if err != nil {
		return err
	}
	return ws.DeleteWebhook(ctx, companyID, id)
}

// WebhookDeliveries returns a page of a company's webhook's delivery log,
// newest first.
func (s *Service) WebhookDeliveries(ctx context.Context, p Principal, companyID, id int64, page DeliveryPage) ([]Delivery, error) {
	ws, err := s.companyWebhooks(ctx, p, companyID)
	if err != nil {
		return nil, err
	}
	if _, err := ws.Webhook(ctx, companyID, id); err != nil {
		return nil, err
	}
	// Up to one more than a page: the gateway asks for it to learn
	// whether another page follows, as the listings do.
	if page.Limit <= 0 || page.Limit > DeliveryLogLimit+1 {
		page.Limit = DeliveryLogLimit + 1
	}
	return ws.Deliveries(ctx, id, page)
}

// WebhookSecret opens a webhook's signing secret for the deliverer. It
// checks no principal and must never be reachable from a request.
func (s *Service) WebhookSecret(w Webhook) ([]byte, error) {
	b, err := s.sealer.Open(w.CompanyID, PurposeWebhookSecret, w.SealedSecret)
	if err != nil {
		return nil, fmt.Errorf("open the secret of webhook %d: %w", w.ID, err)
	}
	return b, nil
}

// emailStore is the store's outbox of e-mails; a store that keeps none is
// an error.
func (s *Service) emailStore() (EmailStore, error) {
	es, ok := s.store.(EmailStore)
	if !ok {
		return nil, errors.New("tenant: the store keeps no e-mails")
	}
	return es, nil
}

// DocumentEmails returns the e-mails of a document, oldest first. The
// caller has decided that its principal may see the document (the
// pipeline's Document).
func (s *Service) DocumentEmails(ctx context.Context, documentID int64) ([]EmailDelivery, error) {
	es, err := s.emailStore()
	if err != nil {
		return nil, err
	}
	return es.DocumentEmails(ctx, documentID)
}

// RequeueEmails makes a document's failed e-mails pending again, due at
// at: the operator's call once the mail server or its credentials are
// fixed. Anyone but an admin gets ErrNotFound, as for a document they
// cannot see.
func (s *Service) RequeueEmails(ctx context.Context, p Principal, documentID int64, at time.Time) (int, error) {
	if p.Role != RoleAdmin {
		return 0, ErrNotFound
	}
	es, err := s.emailStore()
	if err != nil {
		return 0, err
	}
	return es.RequeueEmails(ctx, documentID, at)
}
