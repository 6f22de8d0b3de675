-- User names are unique within a company, not across the service: a
-- company's user cannot learn, by choosing a taken name, that some other
-- tenant has a user of that name. Admins and resellers (no company) keep
-- names unique among themselves.
ALTER TABLE api_users DROP CONSTRAINT api_users_username_key;
CREATE UNIQUE INDEX api_users_company_username ON api_users (company_id, username)
    WHERE company_id IS NOT NULL;
CREATE UNIQUE INDEX api_users_operator_username ON api_users (username)
    WHERE company_id IS NULL;
