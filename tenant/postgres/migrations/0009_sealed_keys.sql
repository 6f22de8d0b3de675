-- Keys the service derived from its master key, sealed under the current
-- master key, so that they outlive a master-key rotation (see
-- docs/design/secrets.md).
CREATE TABLE sealed_keys (
    name       text PRIMARY KEY,
    sealed     bytea NOT NULL,
    created_at timestamptz NOT NULL
);
