-- Delivery (issue 14): the companies' webhooks and the outbox of their
-- deliveries and of the accepted documents' e-mails. The outbox rows are
-- written by the save that changes a document's estado, in its
-- transaction (docs/design/delivery.md).
CREATE TABLE webhooks (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id    INTEGER NOT NULL REFERENCES companies (id),
    url           TEXT    NOT NULL,
    -- A JSON array of event names.
    eventos       TEXT    NOT NULL,
    sealed_secret BLOB    NOT NULL,
    created_at    TEXT    NOT NULL,
    -- The replica delivering to it, until lease_until; lease_until also
    -- orders the claims (least recently leased first).
    lease_holder  TEXT    NOT NULL DEFAULT '',
    lease_until   TEXT
) STRICT;
-- The outbox's probe on every save that changes an estado.
CREATE INDEX webhooks_company ON webhooks (company_id, id);

CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    company_id      INTEGER NOT NULL,
    event_id        TEXT    NOT NULL,
    evento          TEXT    NOT NULL,
    clave           TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    payload         BLOB    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_attempt_at TEXT,
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    delivered_at    TEXT,
    failed_at       TEXT
) STRICT;
-- The log, newest first.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);
-- What is due, per webhook; only pending rows have a next attempt.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at)
    WHERE next_attempt_at IS NOT NULL;
-- The backlog gauge.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at)
    WHERE next_attempt_at IS NOT NULL;

CREATE TABLE email_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL,
    document_id     INTEGER NOT NULL REFERENCES documents (id),
    clave           TEXT    NOT NULL,
    -- A JSON array of addresses.
    recipients      TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_attempt_at TEXT,
    last_error      TEXT    NOT NULL DEFAULT '',
    -- A JSON array of {correo, codigo, mensaje}: addresses refused for good.
    rejected        TEXT    NOT NULL DEFAULT '[]',
    sent_at         TEXT,
    failed_at       TEXT
) STRICT;
CREATE INDEX email_deliveries_document ON email_deliveries (document_id, id);
CREATE INDEX email_deliveries_due ON email_deliveries (next_attempt_at, id)
    WHERE next_attempt_at IS NOT NULL;
