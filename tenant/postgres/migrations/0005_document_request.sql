-- A document keeps the request it was issued from, so that one numbered but
-- not yet built (the process died between numbering and storing the signed
-- XML) can be finished by the background worker instead of waiting for the
-- caller to send it again.
ALTER TABLE documents ADD COLUMN request bytea;

-- The background worker's poll now also finds numbered documents (00) whose
-- send call ran past its lease.
DROP INDEX documents_due;
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL;

-- Documents numbered before this migration by a send that never finished
-- (no clave, no XML, no reason) become due, so that the worker ends them
-- with a reason instead of leaving them without an exit.
UPDATE documents SET next_attempt_at = created_at
WHERE estado = '00' AND signed_xml IS NULL AND last_error = '' AND next_attempt_at IS NULL;
