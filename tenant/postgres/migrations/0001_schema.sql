-- The schema: companies, their branches and users; the documents they issue
-- and the sequences that number them; the documents their suppliers issued
-- to them with their answers; the outbox of webhooks and e-mails; and the
-- service's own bookkeeping (leases, sealed keys, credential stops).
-- tenant/sqlite/migrations holds the same schema for SQLite.

-- Companies, their branches and the API users that act for them.

-- Company ids are reserved before the row exists (a company's id seals its
-- secrets), so they come from a sequence of their own: nextval never hands
-- out a value twice, and a reserved id that is never used is just skipped.
CREATE SEQUENCE company_ids AS bigint;

CREATE TABLE companies (
    id                         bigint      PRIMARY KEY,
    owner_id                   bigint      NOT NULL DEFAULT 0,
    tipo_identificacion        text        NOT NULL,
    numero_identificacion      text        NOT NULL,
    razon_social               text        NOT NULL,
    -- tenant.FoldName(razon_social), compared byte by byte so that search
    -- order is the same on every server whatever its locale.
    name_key                   text        COLLATE "C" NOT NULL,
    actividad_comercial        text        NOT NULL,
    tipo_cliente               text        NOT NULL,
    razon_comercial            text        NOT NULL,
    provincia                  text        NOT NULL,
    canton                     text        NOT NULL,
    distrito                   text        NOT NULL,
    barrio                     text        NOT NULL,
    otras_senas                text        NOT NULL,
    cod_pais                   text        NOT NULL,
    telefono                   text        NOT NULL,
    fax                        text        NOT NULL,
    correo_electronico         text        NOT NULL,
    moneda_local               text        NOT NULL,
    moneda_extranjera          text        NOT NULL,
    facturacion_electronica    boolean     NOT NULL,
    activo                     boolean     NOT NULL,
    usuario_hacienda           text        NOT NULL,
    sealed_contrasena_hacienda bytea,
    sealed_certificate         bytea,
    sealed_certificate_pin     bytea,
    certificate_expiry         timestamptz,
    certificate_version        bigint      NOT NULL DEFAULT 0,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL
);

-- Search walks the folded names in order and stops at the limit; a
-- reseller's search starts at its own companies.
CREATE INDEX companies_name_key ON companies (name_key, id);
CREATE INDEX companies_owner ON companies (owner_id, name_key, id);

-- One company per taxpayer. The clave of every document carries the
-- issuer's identification and the consecutivo, so two companies with the
-- same identification would hand out the same claves.
CREATE UNIQUE INDEX companies_numero_identificacion ON companies (numero_identificacion);

CREATE TABLE branches (
    id                    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id            bigint      NOT NULL REFERENCES companies (id),
    sucursal              text        NOT NULL,
    razon_comercial       text        NOT NULL,
    provincia             text        NOT NULL,
    canton                text        NOT NULL,
    distrito              text        NOT NULL,
    barrio                text        NOT NULL,
    otras_senas           text        NOT NULL,
    cod_pais              text        NOT NULL,
    telefono              text        NOT NULL,
    fax                   text        NOT NULL,
    correo_electronico    text        NOT NULL,
    moneda_local          text        NOT NULL,
    moneda_extranjera     text        NOT NULL,
    ver_moneda_extranjera boolean     NOT NULL,
    licencia              text        NOT NULL,
    activo                boolean     NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    CONSTRAINT branches_company_sucursal_key UNIQUE (company_id, sucursal),
    -- Lets api_users name a branch together with its company.
    CONSTRAINT branches_id_company_key UNIQUE (id, company_id)
);

CREATE TABLE api_users (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text        NOT NULL,
    password_hash text        NOT NULL,
    token_hash    bytea       NOT NULL CONSTRAINT api_users_token_hash_key UNIQUE,
    role          text        NOT NULL CHECK (role IN ('admin', 'reseller', 'branch')),
    -- NULL for admins and resellers; a branch user's branch must belong to
    -- its company.
    company_id    bigint      REFERENCES companies (id),
    branch_id     bigint,
    activo        boolean     NOT NULL,
    created_at    timestamptz NOT NULL,
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id)
);

CREATE INDEX api_users_branch ON api_users (company_id, branch_id, id);

-- User names are unique within a company, not across the service: a
-- company's user cannot learn, by choosing a taken name, that some other
-- tenant has a user of that name. Admins and resellers (no company) have
-- names unique among themselves.
CREATE UNIQUE INDEX api_users_company_username ON api_users (company_id, username)
    WHERE company_id IS NOT NULL;
CREATE UNIQUE INDEX api_users_operator_username ON api_users (username)
    WHERE company_id IS NULL;

-- Issued documents and the sequences that number them.

-- document_sequences holds the last number handed out per branch, terminal
-- and document type (the receivers' messages have types of their own: 05,
-- 06, 07). ReserveDocument increments it with INSERT ... ON CONFLICT DO
-- UPDATE in the statement that inserts the document: the row lock
-- serialises the writers of one sequence only, a number is never handed out
-- twice, and a failed insert rolls the step back with it.
CREATE TABLE document_sequences (
    branch_id   bigint NOT NULL REFERENCES branches (id),
    terminal    text   NOT NULL,
    tipo        text   NOT NULL,
    last_numero bigint NOT NULL CHECK (last_numero BETWEEN 1 AND 9999999999),
    PRIMARY KEY (branch_id, terminal, tipo)
);

-- A document's emisor and receptor are the XML's parties, as the reception
-- API's JSON takes them: in a purchase invoice (08) the emisor is the
-- seller and the company that signs it is the receptor. request is the
-- request the document was issued from (set at numbering, never changed),
-- so that one numbered but not yet built (the process died between
-- numbering and storing the signed XML) can be finished by the background
-- worker instead of waiting for the caller to send it again.
CREATE TABLE documents (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id       bigint      NOT NULL,
    branch_id        bigint      NOT NULL,
    id_externo       text        NOT NULL,
    request_hash     bytea,
    tipo             text        NOT NULL,
    terminal         text        NOT NULL,
    numero           bigint      NOT NULL CHECK (numero BETWEEN 1 AND 9999999999),
    consecutivo      text        NOT NULL,
    clave            text        NOT NULL,
    situacion        text        NOT NULL,
    fecha_emision    timestamptz,
    emisor_tipo      text        NOT NULL,
    emisor_numero    text        NOT NULL,
    receptor_tipo    text        NOT NULL,
    receptor_numero  text        NOT NULL,
    estado           text        NOT NULL CHECK (estado IN ('00', '01', '02', '03', '04', '05')),
    -- Where the row stands in its lifecycle (tenant.Phase), which its estado
    -- follows: the check keeps the two together.
    phase            text        NOT NULL,
    signed_xml       bytea,
    ind_estado       text        NOT NULL,
    codigo_mensaje   text        NOT NULL,
    mensaje_hacienda text        NOT NULL,
    -- NULL for a nil list, '{}' for an empty one.
    detalle_mensaje  text[],
    response_xml     bytea,
    last_error       text        NOT NULL,
    attempts         integer     NOT NULL,
    next_attempt_at  timestamptz,
    submitted_at     timestamptz,
    checked_at       timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    request          bytea,
    -- The branch must belong to the company.
    CONSTRAINT documents_branch_company_fkey FOREIGN KEY (branch_id, company_id)
        REFERENCES branches (id, company_id),
    CONSTRAINT documents_number_key UNIQUE (branch_id, terminal, tipo, numero),
    CONSTRAINT documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
);

-- The caller's id is unique per branch (idempotency); a clave is unique
-- once set. Both serve the lookups by clave and by id_externo, which repeat
-- the partial condition so that the index applies to any parameter.
CREATE UNIQUE INDEX documents_branch_id_externo_key ON documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE UNIQUE INDEX documents_clave_key ON documents (clave) WHERE clave <> '';

-- A consecutivo names one document of its branch: the tax authority knows
-- a document by it as much as by its clave. Two claves of one branch with
-- the same consecutivo (a caller's clave with another security code, or a
-- caller's clave and a number the service handed out) are refused.
CREATE UNIQUE INDEX documents_branch_consecutivo_key ON documents (branch_id, consecutivo)
    WHERE consecutivo <> '';

-- The background worker's poll: documents numbered whose send call ran past
-- its lease (00), or waiting for a submission or a status check (05, 04),
-- most overdue first.
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL;

-- The state gauges count the documents not settled yet, per state and per
-- side (a next attempt set: the service works on it; none: it waits for its
-- company), and find the oldest the service works on. This index holds
-- only those documents (a few in a healthy service, however many millions
-- are settled) and carries next_attempt_at, so that the counts and the
-- minimum are read from it alone, without touching the table.
CREATE INDEX documents_waiting ON documents (estado, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');

-- Listing documents (GET /api/documents/v4) pages through a company's
-- documents newest first by issue time, then id, with keyset pagination:
-- a page starts after the last row of the page before. Every index here
-- leads with the company and ends with that order, so a page is one range
-- read of its index, the same cost on the millionth document as on the
-- first; the filters that narrow a listing most have their own. An
-- id_externo names at most one document per branch: that filter probes
-- documents_branch_id_externo_key once per branch of the company instead.
--
-- The pipeline stamps a document's issue time before numbering it; a row
-- stored without one is listed at the time it was numbered. The listing
-- orders on COALESCE(fecha_emision, created_at), which never changes once a
-- document is numbered, so a walk through the pages never meets a row
-- twice nor skips one.
CREATE INDEX documents_list ON documents
    (company_id, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX documents_list_estado ON documents
    (company_id, estado, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX documents_list_tipo ON documents
    (company_id, tipo, (COALESCE(fecha_emision, created_at)), id);
-- The counterparty: the receptor of the send request, which for a purchase
-- invoice (08) is the seller, stored as the XML's emisor.
CREATE INDEX documents_list_receptor ON documents
    (company_id, (CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END),
     (COALESCE(fecha_emision, created_at)), id);

-- Documents suppliers issued to a company and the company's answer to each
-- (a receiver's message). The message is numbered from document_sequences
-- with its own types (05, 06, 07), in the statement that inserts the row.
--
-- request is the answer the message was made from (the request without the
-- supplier's XML, which supplier_xml holds), set at numbering and never
-- changed, so that one numbered but not yet signed (its call died) is
-- finished by the worker with its number and date.
--
-- firma_politica is the XAdES signature policy the supplier's signature
-- commits to (its xades:SigPolicyId/Identifier, a resolution's URL as
-- written), so that which policy each supplier signed under can be
-- audited: suppliers' signers commit to the v4.1, v4.3 or v4.4 resolution,
-- or to none (XAdES-BES, empty). Written when the message is numbered and
-- never changed.
CREATE TABLE received_documents (
    id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id        bigint      NOT NULL,
    branch_id         bigint      NOT NULL,
    id_externo        text        NOT NULL,
    request_hash      bytea,
    clave             text        NOT NULL CHECK (length(clave) = 50),
    tipo_documento    text        NOT NULL,
    emisor_tipo       text        NOT NULL,
    emisor_numero     text        NOT NULL,
    emisor_nombre     text        NOT NULL,
    receptor_tipo     text        NOT NULL,
    receptor_numero   text        NOT NULL,
    fecha_emision     timestamptz,
    total_impuesto    text        NOT NULL,
    total_comprobante text        NOT NULL,
    supplier_xml      bytea       NOT NULL,
    mensaje           text        NOT NULL CHECK (mensaje IN ('1', '2', '3')),
    tipo              text        NOT NULL CHECK (tipo IN ('05', '06', '07')),
    terminal          text        NOT NULL,
    numero            bigint      NOT NULL CHECK (numero BETWEEN 1 AND 9999999999),
    consecutivo       text        NOT NULL,
    fecha_mensaje     timestamptz,
    signed_xml        bytea,
    estado            text        NOT NULL CHECK (estado IN ('00', '01', '02', '03', '04', '05')),
    -- Where the row stands in its lifecycle (tenant.Phase), which its estado
    -- follows: the check keeps the two together.
    phase             text        NOT NULL,
    ind_estado        text        NOT NULL,
    codigo_mensaje    text        NOT NULL,
    mensaje_hacienda  text        NOT NULL,
    -- NULL for a nil list, '{}' for an empty one.
    detalle_mensaje   text[],
    response_xml      bytea,
    last_error        text        NOT NULL,
    attempts          integer     NOT NULL,
    next_attempt_at   timestamptz,
    submitted_at      timestamptz,
    checked_at        timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    request           bytea,
    firma_politica    text        NOT NULL DEFAULT '',
    CONSTRAINT received_documents_branch_company_fkey FOREIGN KEY (branch_id, company_id)
        REFERENCES branches (id, company_id),
    -- One answer per supplier document and company.
    CONSTRAINT received_documents_company_clave UNIQUE (company_id, clave),
    CONSTRAINT received_documents_branch_numero UNIQUE (branch_id, terminal, tipo, numero),
    CONSTRAINT received_documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
);

CREATE UNIQUE INDEX received_documents_branch_id_externo ON received_documents (branch_id, id_externo)
    WHERE id_externo <> '';

-- Listing received documents (GET /api/received/v4) takes the query of the
-- documents' listing over received_documents: a company's rows newest first
-- by the supplier document's issue time, then id, with keyset pagination.
-- Every index leads with the company and ends with that order, so that a
-- page is one range read of its index whatever its depth. The counterparty
-- of a received document is its supplier, the emisor. An id_externo names
-- at most one row per branch: that filter probes
-- received_documents_branch_id_externo once per branch instead.
CREATE INDEX received_list ON received_documents
    (company_id, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX received_list_estado ON received_documents
    (company_id, estado, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX received_list_tipo ON received_documents
    (company_id, tipo_documento, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX received_list_emisor ON received_documents
    (company_id, emisor_numero, (COALESCE(fecha_emision, created_at)), id);

-- The background worker settles the company's messages as it settles
-- documents: it claims the due rows (a message held past its call, 05 to
-- resubmit after asking the status, 04 to poll) along this index, which
-- holds only the rows still being worked on.
CREATE INDEX received_due ON received_documents (next_attempt_at, id)
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL;

-- The state gauges count the messages not settled yet beside the documents
-- (facturad_documents{kind="received"}), as documents_waiting lets them do
-- for documents. received_due holds only the messages with a next attempt,
-- so it cannot count those waiting for their company.
CREATE INDEX received_waiting ON received_documents (estado, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');

-- The large values (a document's request, signed XML and answer; a received
-- document's supplier XML, message and answer) are compressed with lz4
-- instead of PostgreSQL's default pglz when they are stored. A signed
-- document of 10 KB is compressed once when the signed XML is saved and once
-- more for the answer; with pglz that was a sixth of the server's CPU per
-- document (docs/performance.md, "PostgreSQL's CPU per document"). lz4
-- compresses such XML about as well at a fraction of the cost.
--
-- lz4 needs PostgreSQL 14 or later built with it (as the PostgreSQL
-- project's packages and images are). Without it the columns keep pglz, the
-- server's log says why, and nothing else changes.
DO $$
BEGIN
    IF current_setting('server_version_num')::int < 140000 THEN
        RAISE WARNING 'PostgreSQL before 14 compresses with pglz only: the large columns keep it';
        RETURN;
    END IF;
    EXECUTE 'ALTER TABLE documents
        ALTER COLUMN request SET COMPRESSION lz4,
        ALTER COLUMN signed_xml SET COMPRESSION lz4,
        ALTER COLUMN response_xml SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE received_documents
        ALTER COLUMN supplier_xml SET COMPRESSION lz4,
        ALTER COLUMN signed_xml SET COMPRESSION lz4,
        ALTER COLUMN response_xml SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
    RAISE WARNING 'this PostgreSQL is built without lz4: the large columns keep pglz (%)', SQLERRM;
END
$$;

-- A lease gives one replica a store-wide job (exporting the state gauges)
-- until expires_at; another takes it over once that has passed.
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Keys the service derived from its master key, sealed under the current
-- master key, so that they outlive a master-key rotation (see
-- docs/design/secrets.md).
CREATE TABLE sealed_keys (
    name       text PRIMARY KEY,
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL
);

-- Delivery: the companies' webhooks and the outbox of their deliveries and
-- of the accepted documents' e-mails. The outbox rows are written by the
-- save that changes a document's estado, in its transaction
-- (docs/design/delivery.md).
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

-- Companies whose tax-authority credentials the token service refused. Their
-- stopped documents wait with no next attempt (a 05 no claim takes); this row
-- paces the background worker's slow probes of the credentials (one of the
-- documents made due at next_probe_at), shared by every replica.
CREATE TABLE credential_stops (
    company_id    bigint PRIMARY KEY REFERENCES companies (id),
    since         timestamptz NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    next_probe_at timestamptz NOT NULL
);
CREATE INDEX credential_stops_due ON credential_stops (next_probe_at);
