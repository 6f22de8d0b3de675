package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"facturad/hacienda/api"
)

// Delivery (A.12): a company's webhooks, their delivery log, and a
// document's e-mails.

// The bodies of the delivery calls and the deliveries' envelope are the
// contract's, from package hacienda/api.
type (
	// Webhook is a registered webhook as listed, without its secret.
	Webhook = api.Webhook
	// WebhookCreated is the answer of CreateWebhook: the webhook and its
	// Secreto, shown this once. Keep it: it signs every delivery.
	WebhookCreated = api.WebhookCreated
	// Delivery is one event delivered (or being delivered) to a webhook.
	Delivery = api.Delivery
	// DeliveryPage is a page of a webhook's delivery log, newest first.
	DeliveryPage = api.Page[Delivery]
	// DocumentEmail is what became of an accepted document's e-mail.
	DocumentEmail = api.DocumentEmail
	// EmailRejection is an address the mail server refused for good.
	EmailRejection = api.EmailRejection
	// WebhookEvent is the body of a delivery: the event's id (the same on
	// every repeat of it), its name, when it happened and the document as
	// the read call answers it (Document for documento.*,
	// ReceivedDocument for recibido.*: decode Data accordingly).
	WebhookEvent = api.WebhookEvent
)

func webhooksPath(companyID int64) string {
	return companyPath(companyID) + "/webhooks"
}

// CreateWebhook registers a webhook of the company for the events named
// (POST /api/companies/{id}/webhooks/v4). The answer's Secreto is shown
// this once.
func (c *Client) CreateWebhook(ctx context.Context, companyID int64, rawURL string, eventos ...string) (*WebhookCreated, error) {
	r, err := jsonRequest(http.MethodPost, webhooksPath(companyID)+"/v4", api.WebhookRequest{URL: rawURL, Eventos: eventos}, false)
	if err != nil {
		return nil, err
	}
	var w WebhookCreated
	if err := c.callJSON(ctx, r, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Webhooks lists the company's webhooks (without secrets).
func (c *Client) Webhooks(ctx context.Context, companyID int64) ([]Webhook, error) {
	var out []Webhook
	err := c.callJSON(ctx, request{method: http.MethodGet, path: webhooksPath(companyID) + "/v4", safe: true}, &out)
	return out, err
}

// DeleteWebhook removes a webhook and its pending deliveries.
func (c *Client) DeleteWebhook(ctx context.Context, companyID, id int64) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: webhooksPath(companyID) + "/" + strconv.FormatInt(id, 10) + "/v4", safe: true})
	return err
}

// WebhookDeliveries reads a page of a webhook's delivery log, newest
// first: limit 0 is the service's default (50), cursor "" the first page,
// then each page's Next.
func (c *Client) WebhookDeliveries(ctx context.Context, companyID, id int64, limit int, cursor string) (*DeliveryPage, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	path := webhooksPath(companyID) + "/" + strconv.FormatInt(id, 10) + "/deliveries/v4"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var p DeliveryPage
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: path, safe: true}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// DocumentEmails reads what became of a document's e-mails to its
// receptor (GET /api/documents/{clave}/email/v4).
func (c *Client) DocumentEmails(ctx context.Context, clave string) ([]DocumentEmail, error) {
	var out []DocumentEmail
	err := c.callJSON(ctx, request{method: http.MethodGet, path: documentPath(clave) + "/email/v4", safe: true}, &out)
	return out, err
}

// RequeueEmails makes a document's failed e-mails pending again, to be
// sent at once, once the cause (the mail server, its credentials) is
// fixed, and answers the document's e-mails (POST
// /api/documents/{clave}/email/v4). Only an admin may: anyone else gets
// ErrNotFound, as for a document it cannot see.
func (c *Client) RequeueEmails(ctx context.Context, clave string) ([]DocumentEmail, error) {
	var out []DocumentEmail
	err := c.callJSON(ctx, request{method: http.MethodPost, path: documentPath(clave) + "/email/v4"}, &out)
	return out, err
}

// WebhookTolerance is the recommended tolerance of VerifyWebhook: a
// delivery signed longer ago than this (or as far in the future) is
// refused as a replay.
const WebhookTolerance = 5 * time.Minute

// ErrWebhookSignature is a delivery whose signature does not verify.
var ErrWebhookSignature = errors.New("facturad: webhook signature does not verify")

// VerifyWebhook checks a delivery's Facturad-Signature header against its
// raw body and the webhook's secret: "t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">", any v1 may match (there is one today), and
// t must be within tolerance of now (replays of an old delivery are
// refused). Verify the raw bytes as received, before decoding the JSON.
// It uses the standard library only: docs/design/delivery.md shows the
// same code to copy into a receiver that does not import this package.
func VerifyWebhook(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: malformed header", ErrWebhookSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now, beyond the tolerance", ErrWebhookSignature, d.Round(time.Second))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}
