-- Tenant events (A.14): what the service tells a company about itself
-- (its certificate near or past its expiry, its tax-authority credentials
-- refused, its documents stuck), through its webhooks and by e-mail to its
-- correo_notificaciones (docs/design/tenant-events.md).
--
-- tenant_events records each occasion of an event once: the key is the
-- company, the event's name and the occasion ('30d:<expiry>', '7d:<expiry>'
-- and '<expiry>' for a certificate, the start of a credential stop, the
-- clave of a stuck document). The row is inserted in the transaction that
-- writes the event's webhook deliveries and e-mail, and only an insert
-- that wrote its row writes them: two processes, or a restart, checking the
-- same occasion never send it twice. Several occasions may share one event
-- (event_id): one documentos.detenidos names the documents found stuck in
-- one sweep.
CREATE TABLE tenant_events (
    company_id INTEGER NOT NULL REFERENCES companies (id),
    evento     TEXT    NOT NULL,
    ocasion    TEXT    NOT NULL,
    event_id   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (company_id, evento, ocasion)
) STRICT, WITHOUT ROWID;

-- A tenant event's e-mail to the company's correo_notificaciones is about
-- no document: document_id is NULL and evento, event_id and payload (the
-- event's data, as its webhooks get it) say what to write. The rest of the
-- outbox (claims, attempts, retries, retention) is the documents' e-mails'.
--
-- SQLite cannot drop a NOT NULL: the table is rebuilt the way its
-- documentation gives (a new table, the rows copied with their ids and the
-- AUTOINCREMENT counter, the old one dropped, the new one renamed, its
-- indexes made anew); the runner applies it with foreign keys off and
-- checks them before it commits.
CREATE TABLE email_deliveries_v6 (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL,
    document_id     INTEGER REFERENCES documents (id),
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
    failed_at       TEXT,
    evento          TEXT    NOT NULL DEFAULT '',
    event_id        TEXT    NOT NULL DEFAULT '',
    payload         BLOB,
    CONSTRAINT email_deliveries_subject
        CHECK ((document_id IS NOT NULL) <> (evento <> '' AND payload IS NOT NULL))
) STRICT;
INSERT INTO email_deliveries_v6 (id, company_id, document_id, clave, recipients, created_at, attempts,
    next_attempt_at, last_attempt_at, last_error, rejected, sent_at, failed_at)
SELECT id, company_id, document_id, clave, recipients, created_at, attempts,
    next_attempt_at, last_attempt_at, last_error, rejected, sent_at, failed_at
FROM email_deliveries;
-- The copy set the new table's counter to its highest id; the old one's
-- may be higher (rows purged), and ids are never handed out twice.
DELETE FROM sqlite_sequence WHERE name = 'email_deliveries_v6';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'email_deliveries_v6', seq FROM sqlite_sequence WHERE name = 'email_deliveries';
DROP TABLE email_deliveries;
ALTER TABLE email_deliveries_v6 RENAME TO email_deliveries;
CREATE INDEX email_deliveries_document ON email_deliveries (document_id, id);
CREATE INDEX email_deliveries_due ON email_deliveries (next_attempt_at, id)
    WHERE next_attempt_at IS NOT NULL;
CREATE INDEX email_deliveries_settled ON email_deliveries (created_at)
    WHERE next_attempt_at IS NULL;

-- The certificate checks (every hour) and the operators' list
-- (GET /api/admin/certificados/v4) walk the active companies by
-- certificate expiry: a range read of this index, however many companies
-- there are.
CREATE INDEX companies_certificate_expiry ON companies (certificate_expiry, id)
    WHERE activo = 1 AND certificate_expiry IS NOT NULL;
