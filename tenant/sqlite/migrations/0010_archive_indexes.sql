-- The archive's indexes (A.15, docs/design/archive.md): they hold only
-- the rows the sweep still has to visit: settled and not archived,
-- archived and still kept.
CREATE INDEX IF NOT EXISTS documents_unarchived ON documents (id)
    WHERE archived_at IS NULL AND phase IN ('accepted', 'rejected');
CREATE INDEX IF NOT EXISTS documents_archived_kept ON documents (archived_at, id)
    WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL;
CREATE INDEX IF NOT EXISTS received_unarchived ON received_documents (id)
    WHERE archived_at IS NULL AND phase IN ('accepted', 'rejected');
CREATE INDEX IF NOT EXISTS received_archived_kept ON received_documents (archived_at, id)
    WHERE archived_at IS NOT NULL AND parts_dropped_at IS NULL;
