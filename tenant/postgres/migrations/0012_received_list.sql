-- Listing received documents (GET /api/received/v4) takes the query of the
-- documents' listing (0010) over received_documents: a company's rows newest
-- first by the supplier document's issue time, then id, with keyset
-- pagination. Every index leads with the company and ends with that order,
-- so that a page is one range read of its index whatever its depth. The
-- counterparty of a received document is its supplier, the emisor. An
-- id_externo names at most one row per branch: that filter probes the
-- unique (branch_id, id_externo) index of 0011 once per branch instead.
--
-- IF NOT EXISTS: on a very large table an operator may have built these
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock.
CREATE INDEX IF NOT EXISTS received_list ON received_documents
    (company_id, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX IF NOT EXISTS received_list_estado ON received_documents
    (company_id, estado, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX IF NOT EXISTS received_list_tipo ON received_documents
    (company_id, tipo_documento, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX IF NOT EXISTS received_list_emisor ON received_documents
    (company_id, emisor_numero, (COALESCE(fecha_emision, created_at)), id);
