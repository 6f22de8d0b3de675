-- Retention of the outbox: a webhook delivery or an e-mail that is settled
-- (delivered, or failed for good; only pending rows have a next attempt)
-- is deleted once it is older than delivery_retention, in small batches
-- oldest first (docs/design/delivery.md). These indexes hold the settled
-- rows by age, so that a batch is one range read and a pass that finds
-- nothing to delete reads nothing.
--
-- IF NOT EXISTS: on a large outbox an operator may have built these
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock
-- (this migration's CREATE INDEX holds back the saves that write the
-- outbox while it builds).
CREATE INDEX IF NOT EXISTS webhook_deliveries_settled ON webhook_deliveries (created_at)
    WHERE next_attempt_at IS NULL;
CREATE INDEX IF NOT EXISTS email_deliveries_settled ON email_deliveries (created_at)
    WHERE next_attempt_at IS NULL;
