-- The schema: companies, their branches and users; the documents they issue
-- and the sequences that number them; the documents their suppliers issued
-- to them with their answers; the outbox of webhooks and e-mails; and the
-- service's own bookkeeping (leases, sealed keys, credential stops).
-- tenant/postgres/migrations holds the same schema for PostgreSQL.

-- Companies, their branches and the API users that act for them.

-- counters hands out ids that must exist before the row they name (a
-- company's id seals its secrets before the company is inserted). A value is
-- only ever incremented, so an id is never handed out twice.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;

INSERT INTO counters (name, value) VALUES ('company', 0);

CREATE TABLE companies (
    id                         INTEGER PRIMARY KEY,
    owner_id                   INTEGER NOT NULL DEFAULT 0,
    tipo_identificacion        TEXT    NOT NULL,
    numero_identificacion      TEXT    NOT NULL,
    razon_social               TEXT    NOT NULL,
    name_key                   TEXT    NOT NULL,
    actividad_comercial        TEXT    NOT NULL,
    tipo_cliente               TEXT    NOT NULL,
    razon_comercial            TEXT    NOT NULL,
    provincia                  TEXT    NOT NULL,
    canton                     TEXT    NOT NULL,
    distrito                   TEXT    NOT NULL,
    barrio                     TEXT    NOT NULL,
    otras_senas                TEXT    NOT NULL,
    cod_pais                   TEXT    NOT NULL,
    telefono                   TEXT    NOT NULL,
    fax                        TEXT    NOT NULL,
    correo_electronico         TEXT    NOT NULL,
    moneda_local               TEXT    NOT NULL,
    moneda_extranjera          TEXT    NOT NULL,
    facturacion_electronica    INTEGER NOT NULL CHECK (facturacion_electronica IN (0, 1)),
    activo                     INTEGER NOT NULL CHECK (activo IN (0, 1)),
    usuario_hacienda           TEXT    NOT NULL,
    sealed_contrasena_hacienda BLOB,
    sealed_certificate         BLOB,
    sealed_certificate_pin     BLOB,
    certificate_expiry         TEXT,
    certificate_version        INTEGER NOT NULL DEFAULT 0,
    created_at                 TEXT    NOT NULL,
    updated_at                 TEXT    NOT NULL
) STRICT;

-- Search walks the folded names in order; a reseller's search starts at its
-- own companies.
CREATE INDEX companies_name_key ON companies (name_key, id);
CREATE INDEX companies_owner ON companies (owner_id, name_key, id);

-- One company per taxpayer. The clave of every document carries the
-- issuer's identification and the consecutivo, so two companies with the
-- same identification would hand out the same claves.
CREATE UNIQUE INDEX companies_numero_identificacion ON companies (numero_identificacion);

CREATE TABLE branches (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id            INTEGER NOT NULL REFERENCES companies (id),
    sucursal              TEXT    NOT NULL,
    razon_comercial       TEXT    NOT NULL,
    provincia             TEXT    NOT NULL,
    canton                TEXT    NOT NULL,
    distrito              TEXT    NOT NULL,
    barrio                TEXT    NOT NULL,
    otras_senas           TEXT    NOT NULL,
    cod_pais              TEXT    NOT NULL,
    telefono              TEXT    NOT NULL,
    fax                   TEXT    NOT NULL,
    correo_electronico    TEXT    NOT NULL,
    moneda_local          TEXT    NOT NULL,
    moneda_extranjera     TEXT    NOT NULL,
    ver_moneda_extranjera INTEGER NOT NULL CHECK (ver_moneda_extranjera IN (0, 1)),
    licencia              TEXT    NOT NULL,
    activo                INTEGER NOT NULL CHECK (activo IN (0, 1)),
    created_at            TEXT    NOT NULL,
    updated_at            TEXT    NOT NULL,
    UNIQUE (company_id, sucursal),
    -- Lets api_users name a branch together with its company.
    UNIQUE (id, company_id)
) STRICT;

CREATE TABLE api_users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    token_hash    BLOB    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'reseller', 'branch')),
    -- NULL for admins and resellers; a branch user's branch must belong to
    -- its company.
    company_id    INTEGER REFERENCES companies (id),
    branch_id     INTEGER,
    activo        INTEGER NOT NULL CHECK (activo IN (0, 1)),
    created_at    TEXT    NOT NULL,
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id)
) STRICT;

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
-- 06, 07). A value only ever grows: ReserveDocument increments it in the
-- transaction that inserts the document, so a number is never handed out
-- twice, and a failed insert rolls the step back with it.
CREATE TABLE document_sequences (
    branch_id   INTEGER NOT NULL REFERENCES branches (id),
    terminal    TEXT    NOT NULL,
    tipo        TEXT    NOT NULL,
    last_numero INTEGER NOT NULL CHECK (last_numero BETWEEN 1 AND 9999999999),
    PRIMARY KEY (branch_id, terminal, tipo)
) STRICT, WITHOUT ROWID;

-- A document's emisor and receptor are the XML's parties, as the reception
-- API's JSON takes them: in a purchase invoice (08) the emisor is the
-- seller and the company that signs it is the receptor. Its large parts
-- are in tables of their own (document_requests and the two below).
CREATE TABLE documents (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id       INTEGER NOT NULL,
    branch_id        INTEGER NOT NULL,
    id_externo       TEXT    NOT NULL,
    request_hash     BLOB,
    tipo             TEXT    NOT NULL,
    terminal         TEXT    NOT NULL,
    numero           INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 9999999999),
    consecutivo      TEXT    NOT NULL,
    clave            TEXT    NOT NULL,
    situacion        TEXT    NOT NULL,
    fecha_emision    TEXT,
    emisor_tipo      TEXT    NOT NULL,
    emisor_numero    TEXT    NOT NULL,
    receptor_tipo    TEXT    NOT NULL,
    receptor_numero  TEXT    NOT NULL,
    estado           TEXT    NOT NULL CHECK (estado IN ('00', '01', '02', '03', '04', '05')),
    -- Where the row stands in its lifecycle (tenant.Phase), which its estado
    -- follows: the check keeps the two together.
    phase            TEXT    NOT NULL,
    ind_estado       TEXT    NOT NULL,
    codigo_mensaje   TEXT    NOT NULL,
    mensaje_hacienda TEXT    NOT NULL,
    -- A JSON array of strings; NULL for a nil list.
    detalle_mensaje  TEXT,
    last_error       TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  TEXT,
    submitted_at     TEXT,
    checked_at       TEXT,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    -- The branch must belong to the company.
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    UNIQUE (branch_id, terminal, tipo, numero),
    CONSTRAINT documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
) STRICT;

-- The caller's id is unique per branch (idempotency); a clave is unique
-- once set. Both serve the lookups by clave and by id_externo, which repeat
-- the partial condition so that the index applies.
CREATE UNIQUE INDEX documents_branch_id_externo ON documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE UNIQUE INDEX documents_clave ON documents (clave) WHERE clave <> '';

-- A consecutivo names one document of its branch: the tax authority knows
-- a document by it as much as by its clave. Two claves of one branch with
-- the same consecutivo (a caller's clave with another security code, or a
-- caller's clave and a number the service handed out) are refused.
CREATE UNIQUE INDEX documents_branch_consecutivo ON documents (branch_id, consecutivo)
    WHERE consecutivo <> '';

-- The partial indexes over the documents and messages not settled yet (00,
-- 04, 05) name their states with OR, not IN: SQLite evaluates an index's
-- condition for the old and the new row of every insert and update, and
-- compiles an IN list of three or more values into a temporary b-tree it
-- builds on each run, four of them for every save of a document; the same
-- condition written with OR compiles into three comparisons. The queries
-- that read these indexes repeat the condition as written here
-- (unsettledEstados), which is how SQLite knows that they may.

-- The background worker's poll: documents numbered whose send call ran past
-- its lease (00), or waiting for a submission or a status check (05, 04),
-- most overdue first.
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;

-- The state gauges count the documents not settled yet, per state and per
-- side (a next attempt set: the service works on it; none: it waits for its
-- company), and find the oldest the service works on. This index holds
-- only those documents (a few in a healthy service, however many are
-- settled) and keys on next_attempt_at too (SQLite has no INCLUDE), so
-- that the counts and the minimum are read from it alone.
CREATE INDEX documents_waiting ON documents (estado, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');

-- Listing documents (GET /api/documents/v4) pages through a company's
-- documents newest first by issue time, then id, with keyset pagination:
-- a page starts after the last row of the page before. Every index here
-- leads with the company and ends with that order, so a page is one range
-- read of its index, the same cost on the millionth document as on the
-- first; the filters that narrow a listing most have their own. An
-- id_externo names at most one document per branch: that filter probes
-- documents_branch_id_externo once per branch of the company instead.
--
-- The query names the index it walks (INDEXED BY): SQLite keeps no
-- statistics unless ANALYZE runs, and would otherwise guess.
--
-- The pipeline stamps a document's issue time before numbering it; a row
-- stored without one is listed at the time it was numbered. The listing
-- orders on coalesce(fecha_emision, created_at), which never changes once a
-- document is numbered, so a walk through the pages never meets a row
-- twice nor skips one. Times are fixed-width UTC text, so they order as
-- text.
CREATE INDEX documents_list ON documents
    (company_id, coalesce(fecha_emision, created_at), id);
CREATE INDEX documents_list_estado ON documents
    (company_id, estado, coalesce(fecha_emision, created_at), id);
CREATE INDEX documents_list_tipo ON documents
    (company_id, tipo, coalesce(fecha_emision, created_at), id);
-- The counterparty: the receptor of the send request, which for a purchase
-- invoice (08) is the seller, stored as the XML's emisor.
CREATE INDEX documents_list_receptor ON documents
    (company_id, (CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END),
     coalesce(fecha_emision, created_at), id);

-- The large parts of a document (the request it was issued from, its
-- signed XML, the tax authority's answer) are in tables of their own, each
-- written once, so that the saves that move a document through its states
-- rewrite a row of a few hundred bytes: SQLite writes a changed row whole,
-- its overflow pages included, and a document's parts are 15 KB and more.
--
-- The request is kept from numbering on (never changed), so that a
-- document numbered but not yet built (the process died between numbering
-- and storing the signed XML) can be finished by the background worker
-- instead of waiting for the caller to send it again.
CREATE TABLE document_requests (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    request     BLOB    NOT NULL
) STRICT;

CREATE TABLE document_signed_xml (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    xml         BLOB    NOT NULL
) STRICT;

CREATE TABLE document_response_xml (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    xml         BLOB    NOT NULL
) STRICT;

-- Documents suppliers issued to a company and the company's answer to each
-- (a receiver's message). The message is numbered from document_sequences
-- with its own types (05, 06, 07), in the transaction that inserts the row.
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
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id        INTEGER NOT NULL,
    branch_id         INTEGER NOT NULL,
    id_externo        TEXT    NOT NULL,
    request_hash      BLOB,
    clave             TEXT    NOT NULL CHECK (length(clave) = 50),
    tipo_documento    TEXT    NOT NULL,
    emisor_tipo       TEXT    NOT NULL,
    emisor_numero     TEXT    NOT NULL,
    emisor_nombre     TEXT    NOT NULL,
    receptor_tipo     TEXT    NOT NULL,
    receptor_numero   TEXT    NOT NULL,
    fecha_emision     TEXT,
    total_impuesto    TEXT    NOT NULL,
    total_comprobante TEXT    NOT NULL,
    supplier_xml      BLOB    NOT NULL,
    mensaje           TEXT    NOT NULL CHECK (mensaje IN ('1', '2', '3')),
    tipo              TEXT    NOT NULL CHECK (tipo IN ('05', '06', '07')),
    terminal          TEXT    NOT NULL,
    numero            INTEGER NOT NULL CHECK (numero BETWEEN 1 AND 9999999999),
    consecutivo       TEXT    NOT NULL,
    fecha_mensaje     TEXT,
    signed_xml        BLOB,
    estado            TEXT    NOT NULL CHECK (estado IN ('00', '01', '02', '03', '04', '05')),
    -- Where the row stands in its lifecycle (tenant.Phase), which its estado
    -- follows: the check keeps the two together.
    phase             TEXT    NOT NULL,
    ind_estado        TEXT    NOT NULL,
    codigo_mensaje    TEXT    NOT NULL,
    mensaje_hacienda  TEXT    NOT NULL,
    -- A JSON array of strings; NULL for a nil list.
    detalle_mensaje   TEXT,
    response_xml      BLOB,
    last_error        TEXT    NOT NULL,
    attempts          INTEGER NOT NULL,
    next_attempt_at   TEXT,
    submitted_at      TEXT,
    checked_at        TEXT,
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL,
    request           BLOB,
    firma_politica    TEXT    NOT NULL DEFAULT '',
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    -- One answer per supplier document and company.
    UNIQUE (company_id, clave),
    UNIQUE (branch_id, terminal, tipo, numero),
    CONSTRAINT received_documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
) STRICT;

CREATE UNIQUE INDEX received_documents_branch_id_externo ON received_documents (branch_id, id_externo)
    WHERE id_externo <> '';

-- Listing received documents (GET /api/received/v4) takes the query of the
-- documents' listing over received_documents: a company's rows newest first
-- by the supplier document's issue time, then id, with keyset pagination.
-- Every index leads with the company and ends with that order, so that a
-- page is one range read of its index whatever its depth. The counterparty
-- of a received document is its supplier, the emisor. An id_externo names
-- at most one row per branch: that filter probes
-- received_documents_branch_id_externo once per branch instead. The query
-- names the index it walks (INDEXED BY), as for the documents.
CREATE INDEX received_list ON received_documents
    (company_id, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_estado ON received_documents
    (company_id, estado, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_tipo ON received_documents
    (company_id, tipo_documento, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_emisor ON received_documents
    (company_id, emisor_numero, coalesce(fecha_emision, created_at), id);

-- The background worker settles the company's messages as it settles
-- documents: it claims the due rows (a message held past its call, 05 to
-- resubmit after asking the status, 04 to poll) along this index, which
-- holds only the rows still being worked on.
CREATE INDEX received_due ON received_documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;

-- The state gauges count the messages not settled yet beside the documents
-- (facturad_documents{kind="received"}), as documents_waiting lets them do
-- for documents. received_due holds only the messages with a next attempt,
-- so it cannot count those waiting for their company.
CREATE INDEX received_waiting ON received_documents (estado, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');

-- A lease gives one process a store-wide job (exporting the state gauges)
-- until expires_at; another takes it over once that has passed.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;

-- Keys the service derived from its master key, sealed under the current
-- master key, so that they outlive a master-key rotation (see
-- docs/design/secrets.md).
CREATE TABLE sealed_keys (
    name       TEXT PRIMARY KEY,
    sealed     BLOB NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

-- Delivery: the companies' webhooks and the outbox of their deliveries and
-- of the accepted documents' e-mails. The outbox rows are written by the
-- save that changes a document's estado, in its transaction
-- (docs/design/delivery.md).
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
    company_id    INTEGER PRIMARY KEY REFERENCES companies (id),
    since         TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_probe_at TEXT NOT NULL
);
CREATE INDEX credential_stops_due ON credential_stops (next_probe_at);
