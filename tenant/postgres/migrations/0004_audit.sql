-- The audit log (A.14): every change made through the API, and by the
-- operator's commands that change data, one row each. Rows are only ever
-- added: the service deletes none, so a company's log is kept as long as
-- its documents are.

-- company_id 0 is the platform's own log (a reseller created, the admin
-- reset, a re-queue of every company): not a company, so no foreign key.
-- fields holds the names of the request's fields, never their values.
CREATE TABLE audit_log (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id  bigint      NOT NULL CHECK (company_id >= 0),
    recorded_at timestamptz NOT NULL,
    user_id     bigint      NOT NULL CHECK (user_id >= 0),
    username    text        NOT NULL,
    request_id  text        NOT NULL,
    action      text        NOT NULL CHECK (action <> ''),
    fields      text[]      NOT NULL
);

-- A company's log, newest first, page by page (keyset on recorded_at, id).
CREATE INDEX audit_log_company ON audit_log (company_id, recorded_at DESC, id DESC);
