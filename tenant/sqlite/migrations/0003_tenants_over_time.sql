-- Tenants over time (A.14): each company lives in one of the tax
-- authority's environments, may have a monthly quota, and names an address
-- for the notices about itself.
--
-- ambiente is 'pruebas' or 'produccion'. Rows written before this version
-- hold '' until the service adopts them into its configured environment at
-- start (Store.AdoptEnvironment): the migration cannot know which one they
-- were issued in.
ALTER TABLE companies ADD COLUMN ambiente TEXT NOT NULL DEFAULT ''
    CHECK (ambiente IN ('', 'pruebas', 'produccion'));
-- cuota_mensual: documents the company may have numbered in a Costa Rica
-- calendar month; NULL is no limit.
ALTER TABLE companies ADD COLUMN cuota_mensual INTEGER CHECK (cuota_mensual >= 0);
ALTER TABLE companies ADD COLUMN correo_notificaciones TEXT NOT NULL DEFAULT '';

-- A document belongs to the environment its company was in when it was
-- numbered: its state is asked of that environment's endpoints, and each
-- environment numbers apart (the tax authority keeps them apart), so the
-- rules of one document per number and per consecutivo are per
-- environment. The sequences keep their key (branch, terminal, tipo): a
-- branch numbers in one environment at a time, and a company's move rebuilds
-- its sequences from its documents in the environment it moves to
-- (Store.ResetSequences), as in PostgreSQL, whose previous release numbers
-- by that key while a rolling upgrade runs.
--
-- SQLite cannot drop a table's UNIQUE constraint: documents and received_documents are rebuilt
-- the way SQLite documents it: a new table, the rows copied with their ids
-- (and the AUTOINCREMENT counter), the old table dropped, the new one
-- renamed to its name, its indexes made anew (those the state gauges read,
-- documents_waiting and received_waiting, now with ambiente, which they
-- count by). The runner applies every
-- migration with foreign keys off and checks them all before it commits
-- (migrate.go), so that the tables that refer to documents by name refer
-- to the new one.
CREATE TABLE documents_v3 (
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
    ambiente         TEXT    NOT NULL DEFAULT '' CHECK (ambiente IN ('', 'pruebas', 'produccion')),
    -- The branch must belong to the company.
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    UNIQUE (branch_id, ambiente, terminal, tipo, numero),
    CONSTRAINT documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
) STRICT;
INSERT INTO documents_v3 (id, company_id, branch_id, id_externo, request_hash, tipo, terminal, numero, consecutivo,
    clave, situacion, fecha_emision, emisor_tipo, emisor_numero, receptor_tipo,
    receptor_numero, estado, phase, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, last_error, attempts, next_attempt_at, submitted_at, checked_at,
    created_at, updated_at, ambiente)
SELECT id, company_id, branch_id, id_externo, request_hash, tipo, terminal, numero, consecutivo,
    clave, situacion, fecha_emision, emisor_tipo, emisor_numero, receptor_tipo,
    receptor_numero, estado, phase, ind_estado, codigo_mensaje, mensaje_hacienda,
    detalle_mensaje, last_error, attempts, next_attempt_at, submitted_at, checked_at,
    created_at, updated_at, ''
FROM documents;
UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'documents')
WHERE name = 'documents_v3';
DROP TABLE documents;
ALTER TABLE documents_v3 RENAME TO documents;
CREATE UNIQUE INDEX documents_branch_id_externo ON documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE UNIQUE INDEX documents_clave ON documents (clave) WHERE clave <> '';
CREATE UNIQUE INDEX documents_branch_consecutivo ON documents (branch_id, ambiente, consecutivo)
    WHERE consecutivo <> '';
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;
CREATE INDEX documents_waiting ON documents (estado, ambiente, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');
CREATE INDEX documents_list ON documents
    (company_id, coalesce(fecha_emision, created_at), id);
CREATE INDEX documents_list_estado ON documents
    (company_id, estado, coalesce(fecha_emision, created_at), id);
CREATE INDEX documents_list_tipo ON documents
    (company_id, tipo, coalesce(fecha_emision, created_at), id);
CREATE INDEX documents_list_receptor ON documents
    (company_id, (CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END),
     coalesce(fecha_emision, created_at), id);

CREATE TABLE received_documents_v3 (
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
    ambiente          TEXT    NOT NULL DEFAULT '' CHECK (ambiente IN ('', 'pruebas', 'produccion')),
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    -- One answer per supplier document and company.
    UNIQUE (company_id, clave),
    UNIQUE (branch_id, ambiente, terminal, tipo, numero),
    CONSTRAINT received_documents_phase CHECK (phase || ':' || estado IN (
        'numbered:00', 'stopped:00', 'held:05', 'retrying:05', 'credentials:05',
        'submitted:04', 'accepted:01', 'rejected:02', 'refused:03', 'failed:03'))
) STRICT;
INSERT INTO received_documents_v3 (id, company_id, branch_id, id_externo, request_hash, clave, tipo_documento, emisor_tipo,
    emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, fecha_emision,
    total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal, numero,
    consecutivo, fecha_mensaje, signed_xml, estado, phase, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, request, firma_politica, ambiente)
SELECT id, company_id, branch_id, id_externo, request_hash, clave, tipo_documento, emisor_tipo,
    emisor_numero, emisor_nombre, receptor_tipo, receptor_numero, fecha_emision,
    total_impuesto, total_comprobante, supplier_xml, mensaje, tipo, terminal, numero,
    consecutivo, fecha_mensaje, signed_xml, estado, phase, ind_estado, codigo_mensaje,
    mensaje_hacienda, detalle_mensaje, response_xml, last_error, attempts, next_attempt_at,
    submitted_at, checked_at, created_at, updated_at, request, firma_politica, ''
FROM received_documents;
UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'received_documents')
WHERE name = 'received_documents_v3';
DROP TABLE received_documents;
ALTER TABLE received_documents_v3 RENAME TO received_documents;
CREATE UNIQUE INDEX received_documents_branch_id_externo ON received_documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE INDEX received_list ON received_documents
    (company_id, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_estado ON received_documents
    (company_id, estado, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_tipo ON received_documents
    (company_id, tipo_documento, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_list_emisor ON received_documents
    (company_id, emisor_numero, coalesce(fecha_emision, created_at), id);
CREATE INDEX received_due ON received_documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;
CREATE INDEX received_waiting ON received_documents (estado, ambiente, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');

