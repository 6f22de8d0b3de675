-- Each document and message keeps its phase (tenant.Phase): where it stands
-- in its lifecycle, finer than its public estado, which the phase implies
-- (the stores check the two together before every write). A save applies
-- only while the row is still in the phase it was read in.
ALTER TABLE documents ADD COLUMN phase TEXT NOT NULL DEFAULT 'numbered';
ALTER TABLE received_documents ADD COLUMN phase TEXT NOT NULL DEFAULT 'numbered';

UPDATE documents SET phase = CASE
    WHEN estado = '01' THEN 'accepted'
    WHEN estado = '02' THEN 'rejected'
    WHEN estado = '03' AND submitted_at IS NULL THEN 'refused'
    WHEN estado = '03' THEN 'failed'
    WHEN estado = '04' THEN 'submitted'
    WHEN estado = '05' AND next_attempt_at IS NULL THEN 'credentials'
    WHEN estado = '05' AND last_error = '' AND submitted_at IS NULL THEN 'held'
    WHEN estado = '05' THEN 'retrying'
    WHEN last_error <> '' AND next_attempt_at IS NULL THEN 'stopped'
    ELSE 'numbered' END;
UPDATE received_documents SET phase = CASE
    WHEN estado = '01' THEN 'accepted'
    WHEN estado = '02' THEN 'rejected'
    WHEN estado = '03' AND submitted_at IS NULL THEN 'refused'
    WHEN estado = '03' THEN 'failed'
    WHEN estado = '04' THEN 'submitted'
    WHEN estado = '05' AND next_attempt_at IS NULL THEN 'credentials'
    WHEN estado = '05' AND last_error = '' AND submitted_at IS NULL THEN 'held'
    WHEN estado = '05' THEN 'retrying'
    WHEN last_error <> '' AND next_attempt_at IS NULL THEN 'stopped'
    ELSE 'numbered' END;
