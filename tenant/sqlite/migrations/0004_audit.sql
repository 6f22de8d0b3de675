-- The audit log (A.14): every change made through the API, and by the
-- operator's commands that change data, one row each. Rows are only ever
-- added: the service deletes none, so a company's log is kept as long as
-- its documents are.

-- company_id 0 is the platform's own log (a reseller created, the admin
-- reset, a re-queue of every company): not a company, so no foreign key.
-- recorded_at is fixed-width UTC text, so that it compares as text. fields
-- is a JSON array of the names of the request's fields, never their values.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id  INTEGER NOT NULL CHECK (company_id >= 0),
    recorded_at TEXT    NOT NULL,
    user_id     INTEGER NOT NULL CHECK (user_id >= 0),
    username    TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    action      TEXT    NOT NULL CHECK (action <> ''),
    fields      TEXT    NOT NULL
) STRICT;

-- A company's log, newest first, page by page (keyset on recorded_at, id).
CREATE INDEX audit_log_company ON audit_log (company_id, recorded_at, id);
