-- Issued documents and the sequences that number them.

-- document_sequences holds the last number handed out per branch, terminal
-- and document type. A value only ever grows: ReserveDocument increments it
-- in the transaction that inserts the document, so a number is never handed
-- out twice, and a failed insert rolls the step back with it.
CREATE TABLE document_sequences (
    branch_id   INTEGER NOT NULL REFERENCES branches (id),
    terminal    TEXT    NOT NULL,
    tipo        TEXT    NOT NULL,
    last_numero INTEGER NOT NULL CHECK (last_numero BETWEEN 1 AND 9999999999),
    PRIMARY KEY (branch_id, terminal, tipo)
) STRICT, WITHOUT ROWID;

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
    signed_xml       BLOB,
    ind_estado       TEXT    NOT NULL,
    codigo_mensaje   TEXT    NOT NULL,
    mensaje_hacienda TEXT    NOT NULL,
    -- A JSON array of strings; NULL for a nil list.
    detalle_mensaje  TEXT,
    response_xml     BLOB,
    last_error       TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  TEXT,
    submitted_at     TEXT,
    checked_at       TEXT,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    -- The branch must belong to the company.
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    UNIQUE (branch_id, terminal, tipo, numero)
) STRICT;

-- The caller's id is unique per branch (idempotency); a clave is unique
-- once set. Both serve the lookups by clave and by id_externo, which repeat
-- the partial condition so that the index applies.
CREATE UNIQUE INDEX documents_branch_id_externo ON documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE UNIQUE INDEX documents_clave ON documents (clave) WHERE clave <> '';

-- The background worker's poll: documents waiting for a submission or a
-- status check, most overdue first.
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE estado IN ('04', '05') AND next_attempt_at IS NOT NULL;
