-- What a company prints on its documents besides the XML (A.2, ours):
-- free notes (bank accounts, a return policy) and a logo.
--
-- notas_impresas: at most 1,000 characters; '' is none.
ALTER TABLE companies ADD COLUMN notas_impresas text NOT NULL DEFAULT ''
    CHECK (char_length(notas_impresas) <= 1000);
-- logo: the PNG or JPEG file as uploaded, checked by the service (at most
-- 256 KiB and 1,200 pixels a side); NULL is none. The company reads do
-- not carry it (they read logo IS NOT NULL): only the printed documents
-- read the image, and PostgreSQL keeps a value this large out of the
-- row (TOAST), so the rows the sends read do not grow.
ALTER TABLE companies ADD COLUMN logo bytea CHECK (logo IS NULL OR octet_length(logo) BETWEEN 1 AND 262144);
