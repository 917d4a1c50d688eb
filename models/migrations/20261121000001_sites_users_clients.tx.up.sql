-- Sites are the tenants: every other table that holds site data carries site_id.
CREATE TABLE sites (
    id             uuid PRIMARY KEY,
    title          text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    subdomain_slug text NOT NULL UNIQUE CHECK (subdomain_slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- A user belongs to exactly one site. The password grant names a user by
-- e-mail alone, so e-mail addresses are unique across sites (case-insensitively).
CREATE TABLE users (
    id            uuid PRIMARY KEY,
    site_id       uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    name          text NOT NULL DEFAULT '',
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_site_id_idx ON users (site_id);

-- OAuth clients. Secrets are stored only as hashes; a public client has none.
CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    name          text NOT NULL,
    secret_hash   text,
    confidential  boolean NOT NULL,
    redirect_uris text[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (confidential = (secret_hash IS NOT NULL))
);
