-- The partial indexes over the documents and messages not settled yet named
-- their states as `estado IN ('00', '04', '05')`. SQLite evaluates an index's
-- condition for the old and the new row of every insert and update, and
-- compiles an IN list of three or more values into a temporary b-tree it
-- builds on each run: four of them for every save of a document. The same
-- condition written with OR compiles into three comparisons. The queries
-- that read these indexes repeat the condition as written here
-- (unsettledEstados), which is how SQLite knows that they may.
DROP INDEX documents_due;
CREATE INDEX documents_due ON documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;
DROP INDEX documents_waiting;
CREATE INDEX documents_waiting ON documents (estado, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');
DROP INDEX received_due;
CREATE INDEX received_due ON received_documents (next_attempt_at, id)
    WHERE (estado = '00' OR estado = '04' OR estado = '05') AND next_attempt_at IS NOT NULL;
DROP INDEX received_waiting;
CREATE INDEX received_waiting ON received_documents (estado, created_at, next_attempt_at)
    WHERE (estado = '00' OR estado = '04' OR estado = '05');
