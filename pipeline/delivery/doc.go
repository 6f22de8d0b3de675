// Package delivery delivers what happened to the companies' documents:
// webhooks signed with each webhook's secret and the accepted documents'
// e-mails to their receptors, both from the durable outbox that the store
// writes in the transaction of every change of estado (tenant.Event).
//
// A Deliverer claims webhooks whose deliveries are due (a lease per
// webhook, so one replica at a time attempts a webhook, and at most
// Options.PerEndpoint attempts run against it at once), attempts their due
// deliveries with a timeout each, and records each outcome: delivered on a
// 2xx answer, otherwise tried again with exponential backoff and jitter
// until Options.MaxAge (3 days) after the event, then failed. E-mails are
// claimed like the documents the background worker retries and sent
// through the configured SMTP server with the signed XML, the tax
// authority's answer and the PDF attached. docs/design/delivery.md tells
// the whole design.
package delivery
