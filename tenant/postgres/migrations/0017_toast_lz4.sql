-- The large values (a document's request, signed XML and answer; a received
-- document's supplier XML, message and answer) are compressed with lz4
-- instead of PostgreSQL's default pglz when they are stored. A signed
-- document of 10 KB is compressed once when the signed XML is saved and once
-- more for the answer; with pglz that was a sixth of the server's CPU per
-- document (docs/performance.md, "PostgreSQL's CPU per document"). lz4
-- compresses such XML about as well at a fraction of the cost.
--
-- Only new values are compressed with lz4: nothing stored is rewritten,
-- and both kinds are read back alike. The change is to the catalog only,
-- but it takes a brief exclusive lock on both tables, which waits for the
-- statements running on them while the saves queue behind it. It waits 5 s
-- at most: a transaction that holds the tables longer makes the migration
-- fail (and its pod try again later) rather than hold back every save.
--
-- lz4 needs PostgreSQL 14 or later built with it (as the PostgreSQL
-- project's packages and images are). Without it the columns keep pglz, the
-- server's log says why, and nothing else changes.
SET LOCAL lock_timeout = '5s';
DO $$
BEGIN
    IF current_setting('server_version_num')::int < 140000 THEN
        RAISE WARNING 'PostgreSQL before 14 compresses with pglz only: the large columns keep it';
        RETURN;
    END IF;
    EXECUTE 'ALTER TABLE documents
        ALTER COLUMN request SET COMPRESSION lz4,
        ALTER COLUMN signed_xml SET COMPRESSION lz4,
        ALTER COLUMN response_xml SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE received_documents
        ALTER COLUMN supplier_xml SET COMPRESSION lz4,
        ALTER COLUMN signed_xml SET COMPRESSION lz4,
        ALTER COLUMN response_xml SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported THEN
    RAISE WARNING 'this PostgreSQL is built without lz4: the large columns keep pglz (%)', SQLERRM;
END
$$;
