-- The state gauges count the received documents' messages not settled yet
-- beside the documents (facturad_documents{kind="received"}), per state
-- and per side, and find the oldest the service works on, as
-- documents_waiting lets them do for documents: this index holds only the
-- messages in 00, 04 and 05 and keys on next_attempt_at too (SQLite has
-- no INCLUDE), so that the counts and the minimum are read from it alone.
-- (received_due holds only those with a next attempt.)
CREATE INDEX IF NOT EXISTS received_waiting ON received_documents (estado, created_at, next_attempt_at)
    WHERE estado IN ('00', '04', '05');
