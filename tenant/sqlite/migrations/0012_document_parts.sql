-- The large parts of a document (the request it was issued from, its
-- signed XML, the tax authority's answer) move to tables of their own,
-- each written once, so that the saves that move a document through its
-- states rewrite a row of a few hundred bytes: SQLite writes a changed row
-- whole, its overflow pages included, and a document's row held 15 KB and
-- more of them, written again by every save.
CREATE TABLE document_requests (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    request     BLOB    NOT NULL
) STRICT;

CREATE TABLE document_signed_xml (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    xml         BLOB    NOT NULL
) STRICT;

CREATE TABLE document_response_xml (
    document_id INTEGER PRIMARY KEY REFERENCES documents (id),
    xml         BLOB    NOT NULL
) STRICT;

INSERT INTO document_requests (document_id, request)
SELECT id, request FROM documents WHERE request IS NOT NULL AND length(request) > 0;
INSERT INTO document_signed_xml (document_id, xml)
SELECT id, signed_xml FROM documents WHERE signed_xml IS NOT NULL AND length(signed_xml) > 0;
INSERT INTO document_response_xml (document_id, xml)
SELECT id, response_xml FROM documents WHERE response_xml IS NOT NULL AND length(response_xml) > 0;

ALTER TABLE documents DROP COLUMN request;
ALTER TABLE documents DROP COLUMN signed_xml;
ALTER TABLE documents DROP COLUMN response_xml;
