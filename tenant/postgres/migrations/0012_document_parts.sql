-- The large parts of a document (the request it was issued from, its
-- signed XML, the tax authority's answer) move to tables of their own,
-- each written once: a save that moves a document through its states no
-- longer sends them again, and PostgreSQL no longer stores them again
-- (an UPDATE that sets a TOASTed column writes it anew, even unchanged).
CREATE TABLE document_requests (
    document_id bigint PRIMARY KEY REFERENCES documents (id),
    request     bytea  NOT NULL
);

CREATE TABLE document_signed_xml (
    document_id bigint PRIMARY KEY REFERENCES documents (id),
    xml         bytea  NOT NULL
);

CREATE TABLE document_response_xml (
    document_id bigint PRIMARY KEY REFERENCES documents (id),
    xml         bytea  NOT NULL
);

INSERT INTO document_requests (document_id, request)
SELECT id, request FROM documents WHERE request IS NOT NULL AND length(request) > 0;
INSERT INTO document_signed_xml (document_id, xml)
SELECT id, signed_xml FROM documents WHERE signed_xml IS NOT NULL AND length(signed_xml) > 0;
INSERT INTO document_response_xml (document_id, xml)
SELECT id, response_xml FROM documents WHERE response_xml IS NOT NULL AND length(response_xml) > 0;

ALTER TABLE documents DROP COLUMN request, DROP COLUMN signed_xml, DROP COLUMN response_xml;
