-- The state gauges count the received documents' messages not settled yet
-- beside the documents (facturad_documents{kind="received"}), per state
-- and per side, and find the oldest the service works on, as
-- documents_waiting lets them do for documents: this index holds only the
-- messages in 00, 04 and 05 and carries next_attempt_at, so that the
-- counts and the minimum are read from it alone, however many messages
-- are settled. (received_due holds only those with a next attempt.)
-- IF NOT EXISTS: on a very large table an operator may have built it
-- beforehand with CREATE INDEX CONCURRENTLY, which holds no write lock.
CREATE INDEX IF NOT EXISTS received_waiting ON received_documents (estado, created_at)
    INCLUDE (next_attempt_at)
    WHERE estado IN ('00', '04', '05');
