-- The IVA summary of a month (A.15, docs/design/iva-summary.md).
--
-- document_iva and received_iva keep each document's tax breakdown: per
-- tax code and rate, its base, tax, exempt, exonerated and non-subject
-- amounts at 5 decimals (a received one also the creditable tax its
-- message declared), as compact JSON (tenant.IVABreakdown), written when
-- the document is issued or received. The summary adds these up instead of
-- parsing every XML of the month, and keeps working once the XML itself
-- has gone to an archive. A document stored before this migration has no
-- row: the summary computes its breakdown from its stored XML and writes
-- it here.
CREATE TABLE document_iva (
    document_id bigint PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    breakdown   text   NOT NULL
);
CREATE TABLE received_iva (
    received_id bigint PRIMARY KEY REFERENCES received_documents (id) ON DELETE CASCADE,
    breakdown   text   NOT NULL
);

-- A month's sales are the company's accepted documents by issue date, its
-- purchases its accepted messages (mensaje 1 or 2) by the time the service
-- recorded the tax authority's acceptance (checked_at, never changed once
-- the verdict is stored): each a range read of a partial index that holds
-- only the rows that count.
--
-- Built in the migration's transaction, the indexes hold back writes to
-- documents and received_documents for as long as the build takes, which
-- grows with the tables. On a large store, create them first with CREATE
-- INDEX CONCURRENTLY and these very definitions: the migration then finds
-- them and skips them.
CREATE INDEX IF NOT EXISTS documents_iva_month ON documents (company_id, fecha_emision)
    INCLUDE (tipo) WHERE estado = '01';
CREATE INDEX IF NOT EXISTS received_iva_month ON received_documents (company_id, checked_at)
    INCLUDE (tipo_documento) WHERE estado = '01' AND mensaje IN ('1', '2');
