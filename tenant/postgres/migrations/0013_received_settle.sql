-- The background worker settles the company's messages as it settles
-- documents: it claims the due rows (a message held past its call, 05 to
-- resubmit after asking the status, 04 to poll) along this index, which
-- holds only the rows still being worked on.
CREATE INDEX IF NOT EXISTS received_due ON received_documents (next_attempt_at, id)
    WHERE estado IN ('00', '04', '05') AND next_attempt_at IS NOT NULL;

-- A message keeps the answer it was made from (the request without the
-- supplier's XML, which supplier_xml holds), so that one numbered but not
-- yet signed (its call died) is finished by the worker with its number and
-- date. NULL for the messages numbered before it was kept.
ALTER TABLE received_documents ADD COLUMN request bytea;
