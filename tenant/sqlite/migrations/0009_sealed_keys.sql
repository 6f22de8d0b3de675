-- Keys the service derived from its master key, sealed under the current
-- master key, so that they outlive a master-key rotation (see
-- docs/design/secrets.md).
CREATE TABLE sealed_keys (
    name       TEXT PRIMARY KEY,
    sealed     BLOB NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
