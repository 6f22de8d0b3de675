-- Companies whose tax-authority credentials the token service refused. Their
-- stopped documents wait with no next attempt (a 05 no claim takes); this row
-- paces the background worker's slow probes of the credentials (one of the
-- documents made due at next_probe_at), shared by every replica.
CREATE TABLE credential_stops (
    company_id    bigint PRIMARY KEY REFERENCES companies (id),
    since         timestamptz NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    next_probe_at timestamptz NOT NULL
);
CREATE INDEX credential_stops_due ON credential_stops (next_probe_at);
