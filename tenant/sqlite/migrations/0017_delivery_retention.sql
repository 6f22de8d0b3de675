-- Retention of the outbox: a webhook delivery or an e-mail that is settled
-- (delivered, or failed for good; only pending rows have a next attempt)
-- is deleted once it is older than delivery_retention, in small batches
-- oldest first (docs/design/delivery.md). These indexes hold the settled
-- rows by age, so that a batch is one range read and a pass that finds
-- nothing to delete reads nothing.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (created_at)
    WHERE next_attempt_at IS NULL;
CREATE INDEX email_deliveries_settled ON email_deliveries (created_at)
    WHERE next_attempt_at IS NULL;
