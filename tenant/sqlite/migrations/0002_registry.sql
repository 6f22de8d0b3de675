-- The tax authority's public registries (A.13): the answers shared by every
-- process on the file, and the company's own choice of how a send is
-- checked against them.

-- One answer per question (the registry package names the keys; values are
-- opaque). forget_at NULL: never forgotten (a past day's exchange rate);
-- else fixed-width UTC text, so that it compares as text. A row past
-- forget_at reads as absent and is deleted in batches.
CREATE TABLE registry_cache (
    key       TEXT PRIMARY KEY,
    value     BLOB NOT NULL,
    forget_at TEXT
) STRICT, WITHOUT ROWID;
CREATE INDEX registry_cache_forget_at ON registry_cache (forget_at) WHERE forget_at IS NOT NULL;

-- validacionesRegistro: refuse, warn, off, or '' for the service's setting.
ALTER TABLE companies ADD COLUMN validaciones_registro TEXT NOT NULL DEFAULT ''
    CHECK (validaciones_registro IN ('', 'refuse', 'warn', 'off'));
