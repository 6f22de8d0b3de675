-- Monthly quotas and usage (A.14, docs/design/quotas.md).
--
-- company_usage counts the documents a company with a monthly quota
-- (companies.cuota_mensual) has numbered in a Costa Rica calendar month
-- (periodo, YYYY-MM). ReserveDocument steps it in the IMMEDIATE
-- transaction that numbers the document, and only while it is below the
-- quota read in that same transaction; a refused reservation takes no
-- number. A company without a quota steps no row.
--
-- A month's row is made by the first reservation that finds none, from a
-- count of the company's documents numbered in that month (the index
-- below). While a company has no quota its rows are left as they are and
-- not stepped; setting a quota where there was none makes the current
-- month's row again from that count, in the update's transaction.
CREATE TABLE company_usage (
    company_id INTEGER NOT NULL REFERENCES companies (id),
    periodo    TEXT    NOT NULL CHECK (length(periodo) = 7 AND periodo GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]'
        AND substr(periodo, 6, 2) BETWEEN '01' AND '12'),
    documentos INTEGER NOT NULL CHECK (documentos >= 0),
    PRIMARY KEY (company_id, periodo)
) STRICT, WITHOUT ROWID;

-- Counting a company's documents numbered in a month, for the usage call
-- (by type and estado) and for a quota's first row of the month, is a
-- range read of this index: the listing's indexes order by issue date
-- (fecha_emision), which a caller may set, not by when the service
-- numbered the document. The type never changes; the estado does, and
-- SQLite rewrites the entries of every index holding a column an UPDATE
-- sets, so the estado is read from the rows instead of being carried here
-- (every state save would rewrite this index otherwise).
CREATE INDEX documents_company_created ON documents (company_id, created_at, tipo);
-- The receiver's messages by estado, for the usage call.
CREATE INDEX received_company_created ON received_documents (company_id, created_at);
