-- Companies whose tax-authority credentials the token service refused. Their
-- stopped documents wait with no next attempt (a 05 no claim takes); this row
-- paces the background worker's slow probes of the credentials (one of the
-- documents made due at next_probe_at), shared by every replica.
CREATE TABLE credential_stops (
    company_id    INTEGER PRIMARY KEY REFERENCES companies (id),
    since         TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_probe_at TEXT NOT NULL
);
CREATE INDEX credential_stops_due ON credential_stops (next_probe_at);
