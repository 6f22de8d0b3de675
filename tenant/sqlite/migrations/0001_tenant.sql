-- Companies, their branches and the API users that act for them.

-- counters hands out ids that must exist before the row they name (a
-- company's id seals its secrets before the company is inserted). A value is
-- only ever incremented, so an id is never handed out twice.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;

INSERT INTO counters (name, value) VALUES ('company', 0);

CREATE TABLE companies (
    id                         INTEGER PRIMARY KEY,
    owner_id                   INTEGER NOT NULL DEFAULT 0,
    tipo_identificacion        TEXT    NOT NULL,
    numero_identificacion      TEXT    NOT NULL,
    razon_social               TEXT    NOT NULL,
    name_key                   TEXT    NOT NULL,
    actividad_comercial        TEXT    NOT NULL,
    tipo_cliente               TEXT    NOT NULL,
    razon_comercial            TEXT    NOT NULL,
    provincia                  TEXT    NOT NULL,
    canton                     TEXT    NOT NULL,
    distrito                   TEXT    NOT NULL,
    barrio                     TEXT    NOT NULL,
    otras_senas                TEXT    NOT NULL,
    cod_pais                   TEXT    NOT NULL,
    telefono                   TEXT    NOT NULL,
    fax                        TEXT    NOT NULL,
    correo_electronico         TEXT    NOT NULL,
    moneda_local               TEXT    NOT NULL,
    moneda_extranjera          TEXT    NOT NULL,
    facturacion_electronica    INTEGER NOT NULL CHECK (facturacion_electronica IN (0, 1)),
    activo                     INTEGER NOT NULL CHECK (activo IN (0, 1)),
    usuario_hacienda           TEXT    NOT NULL,
    sealed_contrasena_hacienda BLOB,
    sealed_certificate         BLOB,
    sealed_certificate_pin     BLOB,
    certificate_expiry         TEXT,
    certificate_version        INTEGER NOT NULL DEFAULT 0,
    created_at                 TEXT    NOT NULL,
    updated_at                 TEXT    NOT NULL
) STRICT;

-- Search walks the folded names in order; a reseller's search starts at its
-- own companies.
CREATE INDEX companies_name_key ON companies (name_key, id);
CREATE INDEX companies_owner ON companies (owner_id, name_key, id);

CREATE TABLE branches (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id            INTEGER NOT NULL REFERENCES companies (id),
    sucursal              TEXT    NOT NULL,
    razon_comercial       TEXT    NOT NULL,
    provincia             TEXT    NOT NULL,
    canton                TEXT    NOT NULL,
    distrito              TEXT    NOT NULL,
    barrio                TEXT    NOT NULL,
    otras_senas           TEXT    NOT NULL,
    cod_pais              TEXT    NOT NULL,
    telefono              TEXT    NOT NULL,
    fax                   TEXT    NOT NULL,
    correo_electronico    TEXT    NOT NULL,
    moneda_local          TEXT    NOT NULL,
    moneda_extranjera     TEXT    NOT NULL,
    ver_moneda_extranjera INTEGER NOT NULL CHECK (ver_moneda_extranjera IN (0, 1)),
    licencia              TEXT    NOT NULL,
    activo                INTEGER NOT NULL CHECK (activo IN (0, 1)),
    created_at            TEXT    NOT NULL,
    updated_at            TEXT    NOT NULL,
    UNIQUE (company_id, sucursal),
    -- Lets api_users name a branch together with its company.
    UNIQUE (id, company_id)
) STRICT;

CREATE TABLE api_users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    token_hash    BLOB    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'reseller', 'branch')),
    -- NULL for admins and resellers; a branch user's branch must belong to
    -- its company.
    company_id    INTEGER REFERENCES companies (id),
    branch_id     INTEGER,
    activo        INTEGER NOT NULL CHECK (activo IN (0, 1)),
    created_at    TEXT    NOT NULL,
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id)
) STRICT;

CREATE INDEX api_users_branch ON api_users (company_id, branch_id, id);
