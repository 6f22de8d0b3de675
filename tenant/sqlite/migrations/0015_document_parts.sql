-- The large parts of a document (the request it was issued from, its
-- signed XML, the tax authority's answer) go to tables of their own, each
-- written once, so that the saves that move a document through its states
-- rewrite a row of a few hundred bytes: SQLite writes a changed row whole,
-- its overflow pages included, and a document's row held 15 KB and more of
-- them, written again by every save.
--
-- Documents stored before keep their parts where they are (the columns
-- request, signed_xml and response_xml of documents, which nothing writes
-- any more): the reads take a part from its table, or else from its old
-- column. So this migration only creates tables, whatever the size of the
-- store, and moves no data.
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
