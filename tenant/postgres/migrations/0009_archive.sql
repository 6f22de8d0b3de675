-- The archive (A.15, docs/design/archive.md): a settled row's parts are
-- copied to object storage and, FACTURAD_ARCHIVE_AFTER later, dropped from
-- the store. archived_at, archive_bucket and archive_key record the copy
-- (the key is the prefix of the row's objects; the reads and the drop's
-- check use these, not the service's FACTURAD_ARCHIVE_URL, which an
-- operator may change); parts_dropped_at records the drop, which
-- empties signed_xml and response_xml (and a received row's supplier_xml).
-- A drop is only ever made of an archived row (the store's DropParts
-- checks archived_at in the same statement). archive_failures counts the
-- sweep's failures in a row on the row (to archive it, or to check it and
-- drop its parts) and archive_retry_at is when the sweep tries it again,
-- so that a row that keeps failing is passed over meanwhile and never
-- holds the others back.
--
-- Only columns here: adding a nullable column, or one with a constant
-- default, rewrites no row and reads none, so the ACCESS EXCLUSIVE lock
-- ALTER TABLE takes is held for an instant. Waiting for it, though, queues
-- every later read and write of the table behind a long transaction that
-- holds any lock on it: lock_timeout makes the migration fail instead,
-- changing nothing, to be run again (the next start runs it), rather than
-- stop sends and reads. The indexes are 0010's, which a large store may
-- build concurrently beforehand.
SET LOCAL lock_timeout = '5s';

ALTER TABLE documents
    ADD COLUMN archived_at      timestamptz,
    ADD COLUMN archive_bucket   text NOT NULL DEFAULT '',
    ADD COLUMN archive_key      text NOT NULL DEFAULT '',
    ADD COLUMN parts_dropped_at timestamptz,
    ADD COLUMN archive_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN archive_retry_at timestamptz;
ALTER TABLE received_documents
    ADD COLUMN archived_at      timestamptz,
    ADD COLUMN archive_bucket   text NOT NULL DEFAULT '',
    ADD COLUMN archive_key      text NOT NULL DEFAULT '',
    ADD COLUMN parts_dropped_at timestamptz,
    ADD COLUMN archive_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN archive_retry_at timestamptz;
