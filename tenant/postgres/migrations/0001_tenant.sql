-- Companies, their branches and the API users that act for them.

-- Company ids are reserved before the row exists (a company's id seals its
-- secrets), so they come from a sequence of their own: nextval never hands
-- out a value twice, and a reserved id that is never used is just skipped.
CREATE SEQUENCE company_ids AS bigint;

CREATE TABLE companies (
    id                         bigint      PRIMARY KEY,
    owner_id                   bigint      NOT NULL DEFAULT 0,
    tipo_identificacion        text        NOT NULL,
    numero_identificacion      text        NOT NULL,
    razon_social               text        NOT NULL,
    -- tenant.FoldName(razon_social), compared byte by byte so that search
    -- order is the same on every server whatever its locale.
    name_key                   text        COLLATE "C" NOT NULL,
    actividad_comercial        text        NOT NULL,
    tipo_cliente               text        NOT NULL,
    razon_comercial            text        NOT NULL,
    provincia                  text        NOT NULL,
    canton                     text        NOT NULL,
    distrito                   text        NOT NULL,
    barrio                     text        NOT NULL,
    otras_senas                text        NOT NULL,
    cod_pais                   text        NOT NULL,
    telefono                   text        NOT NULL,
    fax                        text        NOT NULL,
    correo_electronico         text        NOT NULL,
    moneda_local               text        NOT NULL,
    moneda_extranjera          text        NOT NULL,
    facturacion_electronica    boolean     NOT NULL,
    activo                     boolean     NOT NULL,
    usuario_hacienda           text        NOT NULL,
    sealed_contrasena_hacienda bytea,
    sealed_certificate         bytea,
    sealed_certificate_pin     bytea,
    certificate_expiry         timestamptz,
    certificate_version        bigint      NOT NULL DEFAULT 0,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL
);

-- Search walks the folded names in order and stops at the limit; a
-- reseller's search starts at its own companies.
CREATE INDEX companies_name_key ON companies (name_key, id);
CREATE INDEX companies_owner ON companies (owner_id, name_key, id);

CREATE TABLE branches (
    id                    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    company_id            bigint      NOT NULL REFERENCES companies (id),
    sucursal              text        NOT NULL,
    razon_comercial       text        NOT NULL,
    provincia             text        NOT NULL,
    canton                text        NOT NULL,
    distrito              text        NOT NULL,
    barrio                text        NOT NULL,
    otras_senas           text        NOT NULL,
    cod_pais              text        NOT NULL,
    telefono              text        NOT NULL,
    fax                   text        NOT NULL,
    correo_electronico    text        NOT NULL,
    moneda_local          text        NOT NULL,
    moneda_extranjera     text        NOT NULL,
    ver_moneda_extranjera boolean     NOT NULL,
    licencia              text        NOT NULL,
    activo                boolean     NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    CONSTRAINT branches_company_sucursal_key UNIQUE (company_id, sucursal),
    -- Lets api_users name a branch together with its company.
    CONSTRAINT branches_id_company_key UNIQUE (id, company_id)
);

CREATE TABLE api_users (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text        NOT NULL CONSTRAINT api_users_username_key UNIQUE,
    password_hash text        NOT NULL,
    token_hash    bytea       NOT NULL CONSTRAINT api_users_token_hash_key UNIQUE,
    role          text        NOT NULL CHECK (role IN ('admin', 'reseller', 'branch')),
    -- NULL for admins and resellers; a branch user's branch must belong to
    -- its company.
    company_id    bigint      REFERENCES companies (id),
    branch_id     bigint,
    activo        boolean     NOT NULL,
    created_at    timestamptz NOT NULL,
    FOREIGN KEY (branch_id, company_id) REFERENCES branches (id, company_id)
);

CREATE INDEX api_users_branch ON api_users (company_id, branch_id, id);
