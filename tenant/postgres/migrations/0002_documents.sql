-- Issued documents and the sequences that number them.

-- document_sequences holds the last number handed out per branch, terminal
-- and document type. ReserveDocument increments it with INSERT ... ON
-- CONFLICT DO UPDATE in the statement that inserts the document: the row
-- lock serialises the writers of one sequence only, a number is never handed
-- out twice, and a failed insert rolls the step back with it.
CREATE TABLE document_sequences (
    branch_id   bigint NOT NULL REFERENCES branches (id),
    terminal    text   NOT NULL,
    tipo        text   NOT NULL,
    last_numero bigint NOT NULL CHECK (last_numero BETWEEN 1 AND 9999999999),
    PRIMARY KEY (branch_id, terminal, tipo)
);

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
    -- The branch must belong to the company.
    CONSTRAINT documents_branch_company_fkey FOREIGN KEY (branch_id, company_id)
        REFERENCES branches (id, company_id),
    CONSTRAINT documents_number_key UNIQUE (branch_id, terminal, tipo, numero)
);

-- The caller's id is unique per branch (idempotency); a clave is unique
-- once set. Both serve the lookups by clave and by id_externo, which repeat
-- the partial condition so that the index applies to any parameter.
CREATE UNIQUE INDEX documents_branch_id_externo_key ON documents (branch_id, id_externo)
    WHERE id_externo <> '';
CREATE UNIQUE INDEX documents_clave_key ON documents (clave) WHERE clave <> '';

-- The background worker's poll: documents waiting for a submission or a
-- status check, most overdue first.
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE estado IN ('04', '05') AND next_attempt_at IS NOT NULL;
