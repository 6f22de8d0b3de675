-- The archive (A.15, docs/design/archive.md): a settled row's parts are
-- copied to object storage and, FACTURAD_ARCHIVE_AFTER later, dropped from
-- the store. archived_at, archive_bucket and archive_key record the copy
-- (the key is the prefix of the row's objects; the reads and the drop's
-- check use these, not the service's FACTURAD_ARCHIVE_URL, which an
-- operator may change); parts_dropped_at records the drop, which
-- deletes the document's document_signed_xml and document_response_xml
-- rows, or empties a received row's supplier_xml, signed_xml and
-- response_xml. A drop is only ever made of an archived row (the store's
-- DropParts checks archived_at in the same transaction). archive_failures
-- counts the sweep's failures in a row on the row and archive_retry_at is
-- when the sweep tries it again, so that a row that keeps failing never
-- holds the others back.
--
-- Only columns here; the indexes are 0010's, as in PostgreSQL, where the
-- split keeps the table's lock short.
ALTER TABLE documents ADD COLUMN archived_at TEXT;
ALTER TABLE documents ADD COLUMN archive_bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE documents ADD COLUMN archive_key TEXT NOT NULL DEFAULT '';
ALTER TABLE documents ADD COLUMN parts_dropped_at TEXT;
ALTER TABLE documents ADD COLUMN archive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE documents ADD COLUMN archive_retry_at TEXT;
ALTER TABLE received_documents ADD COLUMN archived_at TEXT;
ALTER TABLE received_documents ADD COLUMN archive_bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE received_documents ADD COLUMN archive_key TEXT NOT NULL DEFAULT '';
ALTER TABLE received_documents ADD COLUMN parts_dropped_at TEXT;
ALTER TABLE received_documents ADD COLUMN archive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE received_documents ADD COLUMN archive_retry_at TEXT;
