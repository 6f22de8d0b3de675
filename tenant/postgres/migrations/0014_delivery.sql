-- Delivery (issue 14): the companies' webhooks and the outbox of their
-- deliveries and of the accepted documents' e-mails. The outbox rows are
-- written by the save that changes a document's estado, in its
-- transaction (docs/design/delivery.md).
CREATE TABLE webhooks (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id    bigint      NOT NULL REFERENCES companies (id),
    url           text        NOT NULL,
    eventos       text[]      NOT NULL,
    sealed_secret bytea       NOT NULL,
    created_at    timestamptz NOT NULL,
    -- The replica delivering to it, until lease_until; lease_until also
    -- orders the claims (least recently leased first).
    lease_holder  text        NOT NULL DEFAULT '',
    lease_until   timestamptz
);
-- The outbox's probe on every save that changes an estado.
CREATE INDEX webhooks_company ON webhooks (company_id, id);

CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint      NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    company_id      bigint      NOT NULL,
    event_id        text        NOT NULL,
    evento          text        NOT NULL,
    clave           text        NOT NULL,
    created_at      timestamptz NOT NULL,
    payload         bytea       NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status     integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    delivered_at    timestamptz,
    failed_at       timestamptz
);
-- The log, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);
-- What is due, per webhook; only pending rows have a next attempt.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at)
    WHERE next_attempt_at IS NOT NULL;
-- The backlog gauge.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at)
    WHERE next_attempt_at IS NOT NULL;

CREATE TABLE email_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id      bigint      NOT NULL,
    document_id     bigint      NOT NULL REFERENCES documents (id),
    clave           text        NOT NULL,
    recipients      text[]      NOT NULL,
    created_at      timestamptz NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_error      text        NOT NULL DEFAULT '',
    -- A JSON array of {correo, codigo, mensaje}: addresses refused for good.
    rejected        jsonb       NOT NULL DEFAULT '[]',
    sent_at         timestamptz,
    failed_at       timestamptz
);
CREATE INDEX email_deliveries_document ON email_deliveries (document_id, id);
CREATE INDEX email_deliveries_due ON email_deliveries (next_attempt_at, id)
    WHERE next_attempt_at IS NOT NULL;
