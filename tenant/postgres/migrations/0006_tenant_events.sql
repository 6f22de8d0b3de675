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
-- that wrote its row writes them: two replicas, or a restart, checking the
-- same occasion never send it twice. Several occasions may share one event
-- (event_id): one documentos.detenidos names the documents found stuck in
-- one sweep.
CREATE TABLE tenant_events (
    company_id bigint      NOT NULL REFERENCES companies (id),
    evento     text        NOT NULL,
    ocasion    text        NOT NULL,
    event_id   text        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (company_id, evento, ocasion)
);

-- A tenant event's e-mail to the company's correo_notificaciones is about
-- no document: document_id is NULL and evento, event_id and payload (the
-- event's data, as its webhooks get it) say what to write. The rest of the
-- outbox (claims, attempts, retries, retention) is the documents' e-mails'.
ALTER TABLE email_deliveries ALTER COLUMN document_id DROP NOT NULL;
ALTER TABLE email_deliveries ADD COLUMN evento text NOT NULL DEFAULT '';
ALTER TABLE email_deliveries ADD COLUMN event_id text NOT NULL DEFAULT '';
ALTER TABLE email_deliveries ADD COLUMN payload bytea;
ALTER TABLE email_deliveries ADD CONSTRAINT email_deliveries_subject
    CHECK ((document_id IS NOT NULL) <> (evento <> '' AND payload IS NOT NULL));

-- The certificate checks (every hour) and the operators' list
-- (GET /api/admin/certificados/v4) walk the active companies by
-- certificate expiry: a range read of this index, however many companies
-- there are.
CREATE INDEX companies_certificate_expiry ON companies (certificate_expiry, id)
    WHERE activo AND certificate_expiry IS NOT NULL;
