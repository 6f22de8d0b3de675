-- Monthly quotas and usage (A.14, docs/design/quotas.md).
--
-- company_usage counts the documents a company with a monthly quota
-- (companies.cuota_mensual) has numbered in a Costa Rica calendar month
-- (periodo, YYYY-MM). ReserveDocument steps it in the statement that
-- numbers the document, and only while it is below the quota read in that
-- same statement: the row lock queues the reservations of one company (and
-- only of companies with a quota), so that replicas racing at the limit
-- never number one document more, and a refused reservation takes no
-- number. A company without a quota steps no row and takes no lock.
--
-- A month's row is made by the first reservation that finds none, from a
-- count of the company's documents numbered in that month (the index
-- below). While a company has no quota its rows are left as they are and
-- not stepped; setting a quota where there was none makes the current
-- month's row again from that count, in the update's transaction.
CREATE TABLE company_usage (
    company_id bigint NOT NULL REFERENCES companies (id),
    periodo    text   NOT NULL CHECK (periodo ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    documentos bigint NOT NULL CHECK (documentos >= 0),
    PRIMARY KEY (company_id, periodo)
);

-- Counting a company's documents numbered in a month, for the usage call
-- (by type and estado) and for a quota's first row of the month, is a
-- range read of this index and of nothing else (an index-only scan): the
-- listing's indexes order by issue date (fecha_emision), which a caller
-- may set, not by when the service numbered the document. The estado it
-- carries changes as the document moves on; those saves write new index
-- entries already (estado and next_attempt_at are in other indexes), so
-- carrying it here makes no update that was HOT one that is not.
--
-- Built in the migration's transaction, the indexes hold back writes to
-- documents and received_documents for as long as the build takes, which
-- grows with the tables. On a large store, create them first with CREATE
-- INDEX CONCURRENTLY and these very definitions: the migration then finds
-- them and skips them (docs/design/quotas.md).
CREATE INDEX IF NOT EXISTS documents_company_created ON documents (company_id, created_at)
    INCLUDE (tipo, estado);
-- The receiver's messages by estado, for the usage call.
CREATE INDEX IF NOT EXISTS received_company_created ON received_documents (company_id, created_at)
    INCLUDE (estado);
