-- Documents suppliers issued to a company and the company's answer to each
-- (a receiver's message). The message is numbered from document_sequences
-- with its own types (05, 06, 07), in the transaction that inserts the row.
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
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id),
    -- One answer per supplier document and company.
    UNIQUE (company_id, clave),
    UNIQUE (branch_id, terminal, tipo, numero)
) STRICT;

CREATE UNIQUE INDEX received_documents_branch_id_externo ON received_documents (branch_id, id_externo)
    WHERE id_externo <> '';
