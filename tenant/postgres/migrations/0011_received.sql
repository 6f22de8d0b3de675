-- Documents suppliers issued to a company and the company's answer to each
-- (a receiver's message). The message is numbered from document_sequences
-- with its own types (05, 06, 07), in the statement that inserts the row.
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
    CONSTRAINT received_documents_branch_company_fkey FOREIGN KEY (branch_id, company_id)
        REFERENCES branches (id, company_id),
    -- One answer per supplier document and company.
    CONSTRAINT received_documents_company_clave UNIQUE (company_id, clave),
    CONSTRAINT received_documents_branch_numero UNIQUE (branch_id, terminal, tipo, numero)
);

CREATE UNIQUE INDEX received_documents_branch_id_externo ON received_documents (branch_id, id_externo)
    WHERE id_externo <> '';
