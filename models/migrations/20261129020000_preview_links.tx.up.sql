-- Preview links (issue 29 §3, docs/releases.md "Preview links"): a secret
-- url that shows one release of one site to anyone who has it, read-only,
-- until it expires, is revoked, or the release is published or cancelled.
-- Only the SHA-256 of the token is kept (the token has 256 random bits);
-- a request through a link finds its row by that hash, and counts itself
-- (uses_count, last_used_at, and the per-link rate limit's window, as
-- site_clients counts an integration client's) in the same statement.
CREATE TABLE preview_links (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    release_id   uuid NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    user_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    uses_count   bigint NOT NULL DEFAULT 0,
    rate_limit   integer NOT NULL DEFAULT 600 CHECK (rate_limit BETWEEN 1 AND 1000000),
    window_start timestamptz,
    window_count integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX preview_links_site_idx ON preview_links (site_id, created_at, id);
CREATE INDEX preview_links_release_idx ON preview_links (release_id);
