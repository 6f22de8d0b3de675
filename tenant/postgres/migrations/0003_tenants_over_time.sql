-- Tenants over time (A.14): each company lives in one of the tax
-- authority's environments, may have a monthly quota, and names an address
-- for the notices about itself.
--
-- ambiente is 'pruebas' or 'produccion'. Rows written before this version
-- hold '' until the service adopts them into its configured environment at
-- start (Store.AdoptEnvironment): the migration cannot know which one they
-- were issued in.
ALTER TABLE companies ADD COLUMN ambiente text NOT NULL DEFAULT ''
    CHECK (ambiente IN ('', 'pruebas', 'produccion'));
-- cuota_mensual: documents the company may have numbered in a Costa Rica
-- calendar month; NULL is no limit.
ALTER TABLE companies ADD COLUMN cuota_mensual bigint CHECK (cuota_mensual >= 0);
ALTER TABLE companies ADD COLUMN correo_notificaciones text NOT NULL DEFAULT '';

-- A document belongs to the environment its company was in when it was
-- numbered: its state is asked of that environment's endpoints, and each
-- environment numbers apart (the tax authority keeps them apart), so the
-- rules of one document per number and per consecutivo are per
-- environment. The sequences keep their key (branch, terminal, tipo), which
-- the release before this one numbers by while a rolling upgrade runs: a
-- branch numbers in one environment at a time, and a company's move rebuilds
-- its sequences from its documents in the environment it moves to
-- (Store.ResetSequences).
ALTER TABLE documents ADD COLUMN ambiente text NOT NULL DEFAULT ''
    CHECK (ambiente IN ('', 'pruebas', 'produccion'));
ALTER TABLE received_documents ADD COLUMN ambiente text NOT NULL DEFAULT ''
    CHECK (ambiente IN ('', 'pruebas', 'produccion'));

DROP INDEX documents_branch_consecutivo_key;
CREATE UNIQUE INDEX documents_branch_consecutivo_key ON documents (branch_id, ambiente, consecutivo)
    WHERE consecutivo <> '';
ALTER TABLE documents DROP CONSTRAINT documents_number_key,
    ADD CONSTRAINT documents_number_key UNIQUE (branch_id, ambiente, terminal, tipo, numero);
ALTER TABLE received_documents DROP CONSTRAINT received_documents_branch_numero,
    ADD CONSTRAINT received_documents_branch_numero UNIQUE (branch_id, ambiente, terminal, tipo, numero);

-- The state gauges count the rows not settled yet per environment too,
-- still from these indexes alone.
DROP INDEX documents_waiting;
CREATE INDEX documents_waiting ON documents (estado, ambiente, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');
DROP INDEX received_waiting;
CREATE INDEX received_waiting ON received_documents (estado, ambiente, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');
