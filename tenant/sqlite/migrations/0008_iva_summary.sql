-- The IVA summary of a month (A.15, docs/design/iva-summary.md): each
-- document's tax breakdown (tenant.IVABreakdown, compact JSON), written
-- when it is issued or received, and the partial indexes the month's read
-- walks. A document stored before this migration has no row: the summary
-- computes its breakdown from its stored XML and writes it here (see the
-- PostgreSQL migration of the same number).
CREATE TABLE document_iva (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    breakdown   TEXT    NOT NULL
) STRICT;
CREATE TABLE received_iva (
    received_id INTEGER PRIMARY KEY REFERENCES received_documents (id) ON DELETE CASCADE,
    breakdown   TEXT    NOT NULL
) STRICT;

CREATE INDEX documents_iva_month ON documents (company_id, fecha_emision) WHERE estado = '01';
CREATE INDEX received_iva_month ON received_documents (company_id, checked_at)
    WHERE estado = '01' AND mensaje IN ('1', '2');
