-- The state gauges tell the documents the service still works on (a next
-- attempt is set) from those that wait for their company to act (none is).
-- documents_waiting replaces documents_unsettled and carries next_attempt_at
-- as well, so that the counts per state and side, and the oldest document
-- the service works on, are still read from the index alone.
-- IF NOT EXISTS: on a very large table an operator may have built it
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock.
CREATE INDEX IF NOT EXISTS documents_waiting ON documents (estado, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');
DROP INDEX IF EXISTS documents_unsettled;
