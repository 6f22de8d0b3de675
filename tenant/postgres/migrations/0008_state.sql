-- The state gauges count the documents not settled yet, per state and per
-- side (a next attempt set: the service works on it; none: it waits for its
-- company), and find the oldest the service works on. This index holds
-- only those documents (a few in a healthy service, however many millions
-- are settled) and carries next_attempt_at, so that the counts and the
-- minimum are read from it alone, without touching the table.
-- IF NOT EXISTS: on a very large table an operator may have built it
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock.
CREATE INDEX IF NOT EXISTS documents_waiting ON documents (estado, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');

-- A lease gives one replica a store-wide job (exporting the state gauges)
-- until expires_at; another takes it over once that has passed.
CREATE TABLE leases (
    name       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
