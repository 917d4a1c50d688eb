-- Integration clients (docs/auth.md, "Integration tokens"): confidential
-- OAuth clients an admin makes for one site, which get tokens with the
-- client_credentials grant and act as themselves, with a role, not as a
-- person. The client (its id and secret hash) stays in oauth_clients, so
-- client authentication is the one every client has; deleting it there
-- cascades to this row and to every token it holds.
--
-- window_start and window_count are the client's rate limit (requests per
-- minute), counted here so that it holds across every API replica: each
-- request with a client token counts itself in the statement that checks
-- the token (models.UseClientToken). Person tokens never touch this table.
CREATE TABLE site_clients (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    client_id    text NOT NULL UNIQUE REFERENCES oauth_clients (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('viewer', 'author', 'editor', 'admin')),
    rate_limit   integer NOT NULL DEFAULT 600 CHECK (rate_limit BETWEEN 1 AND 1000000),
    window_start timestamptz,
    window_count integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX site_clients_site_idx ON site_clients (site_id, created_at);

-- An integration client's access token is for no person.
ALTER TABLE oauth_access_tokens ALTER COLUMN user_id DROP NOT NULL;
