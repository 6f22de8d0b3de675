-- User names are unique within a company, not across the service: a
-- company's user cannot learn, by choosing a taken name, that some other
-- tenant has a user of that name. Admins and resellers (no company) keep
-- names unique among themselves. SQLite cannot drop a column's UNIQUE, so
-- the table is built again; no other table refers to it.
CREATE TABLE api_users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    token_hash    BLOB    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'reseller', 'branch')),
    -- NULL for admins and resellers; a branch user's branch must belong to
    -- its company.
    company_id    INTEGER REFERENCES companies (id),
    branch_id     INTEGER,
    activo        INTEGER NOT NULL CHECK (activo IN (0, 1)),
    created_at    TEXT    NOT NULL,
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id)
) STRICT;

INSERT INTO api_users_new (id, username, password_hash, token_hash, role, company_id, branch_id, activo, created_at)
SELECT id, username, password_hash, token_hash, role, company_id, branch_id, activo, created_at FROM api_users;

-- Keep the id sequence, so that no id is ever given out twice.
DELETE FROM sqlite_sequence WHERE name = 'api_users_new';
UPDATE sqlite_sequence SET name = 'api_users_new' WHERE name = 'api_users';

DROP TABLE api_users;
ALTER TABLE api_users_new RENAME TO api_users;

CREATE INDEX api_users_branch ON api_users (company_id, branch_id, id);
CREATE UNIQUE INDEX api_users_company_username ON api_users (company_id, username)
    WHERE company_id IS NOT NULL;
CREATE UNIQUE INDEX api_users_operator_username ON api_users (username)
    WHERE company_id IS NULL;
