-- The state gauges count the documents not settled yet, per state and per
-- side (a next attempt set: the service works on it; none: it waits for its
-- company), and find the oldest the service works on. This index holds
-- only those documents (a few in a healthy service, however many are
-- settled) and keys on next_attempt_at too (SQLite has no INCLUDE), so
-- that the counts and the minimum are read from it alone.
CREATE INDEX IF NOT EXISTS documents_waiting ON documents (estado, created_at, next_attempt_at)
    WHERE estado IN ('00', '04', '05');

-- A lease gives one process a store-wide job (exporting the state gauges)
-- until expires_at; another takes it over once that has passed.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;
