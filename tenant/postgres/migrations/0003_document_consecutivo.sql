-- A consecutivo names one document of its branch: the tax authority knows
-- a document by it as much as by its clave. Two claves of one branch with
-- the same consecutivo (a caller's clave with another security code, or a
-- caller's clave and a number the service handed out) are refused.
CREATE UNIQUE INDEX documents_branch_consecutivo_key ON documents (branch_id, consecutivo)
    WHERE consecutivo <> '';
