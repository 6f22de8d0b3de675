-- The archive's indexes (A.15, docs/design/archive.md). They hold only the
-- rows the sweep still has to visit: settled and not archived, archived
-- and still kept. Their predicates repeat the store's queries as written
-- (tenant/postgres/archive.go).
--
-- documents_unarchived holds every settled document until the sweep
-- archives it, so on a store that never archives (no FACTURAD_ARCHIVE_URL)
-- it holds nearly every row; docs/design/archive.md gives its size.
--
-- Built in the migration's transaction, the indexes hold back writes to
-- documents and received_documents for as long as the build takes, which
-- grows with the tables. On a large store, create them first with CREATE
-- INDEX CONCURRENTLY and these very definitions: the migration then finds
-- them and skips them (docs/design/archive.md).
CREATE INDEX IF NOT EXISTS documents_unarchived ON documents (id)
    WHERE archived_at IS NULL AND phase IN ('accepted', 'rejected');
CREATE INDEX IF NOT EXISTS documents_archived_kept ON documents (archived_at, id)
    WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL;
CREATE INDEX IF NOT EXISTS received_unarchived ON received_documents (id)
    WHERE archived_at IS NULL AND phase IN ('accepted', 'rejected');
CREATE INDEX IF NOT EXISTS received_archived_kept ON received_documents (archived_at, id)
    WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL;
