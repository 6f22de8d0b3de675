-- Listing documents (GET /api/documents/v4) pages through a company's
-- documents newest first by issue time, then id, with keyset pagination:
-- a page starts after the last row of the page before. Every index here
-- leads with the company and ends with that order, so a page is one range
-- read of its index, the same cost on the millionth document as on the
-- first; the filters that narrow a listing most have their own. An
-- id_externo names at most one document per branch: that filter probes the
-- unique (branch_id, id_externo) index of 0002 once per branch of the
-- company instead.
--
-- The issue time of a document numbered before it was recorded is the time
-- it was numbered: the listing orders on COALESCE(fecha_emision,
-- created_at), which never changes once a document is numbered, so a walk
-- through the pages never meets a row twice nor skips one.
--
-- IF NOT EXISTS: on a very large table an operator may have built these
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock.
CREATE INDEX IF NOT EXISTS documents_list ON documents
    (company_id, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX IF NOT EXISTS documents_list_estado ON documents
    (company_id, estado, (COALESCE(fecha_emision, created_at)), id);
CREATE INDEX IF NOT EXISTS documents_list_tipo ON documents
    (company_id, tipo, (COALESCE(fecha_emision, created_at)), id);
-- The counterparty: the receptor of the send request, which for a purchase
-- invoice (08) is the seller, stored as the XML's emisor.
CREATE INDEX IF NOT EXISTS documents_list_receptor ON documents
    (company_id, (CASE WHEN tipo = '08' THEN emisor_numero ELSE receptor_numero END),
     (COALESCE(fecha_emision, created_at)), id);
