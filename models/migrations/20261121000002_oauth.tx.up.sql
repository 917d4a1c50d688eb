-- OAuth 2.0 provider state. Every secret is stored hashed: refresh tokens
-- and authorization codes as SHA-256 (they are long random strings), client
-- secrets and passwords with argon2id.

-- The built-in first-party client: the password grant issues tokens to it
-- when a request names no client.
INSERT INTO oauth_clients (id, name, confidential) VALUES ('pressroom', 'Pressroom first-party clients', false);

-- Signing keys, kept until every token they signed has expired so the JWKS
-- can still verify them after a rotation.
CREATE TABLE oauth_signing_keys (
    id          text PRIMARY KEY,
    algorithm   text NOT NULL,
    private_pem text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- the key signs new tokens until retire_at, and is published until drop_at
    retire_at   timestamptz NOT NULL,
    drop_at     timestamptz NOT NULL
);

-- Authorization requests of the code flow, from /oauth/authorize to the
-- code exchange.
CREATE TABLE oauth_auth_requests (
    id                    uuid PRIMARY KEY,
    client_id             text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri          text NOT NULL,
    state                 text NOT NULL DEFAULT '',
    nonce                 text NOT NULL DEFAULT '',
    scopes                text[] NOT NULL DEFAULT '{}',
    response_type         text NOT NULL,
    code_challenge        text NOT NULL DEFAULT '',
    code_challenge_method text NOT NULL DEFAULT '',
    user_id               uuid REFERENCES users (id) ON DELETE CASCADE,
    site_id               uuid REFERENCES sites (id) ON DELETE CASCADE,
    auth_time             timestamptz,
    code_hash             text UNIQUE,
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz NOT NULL
);

-- Refresh tokens. A login starts a chain; every refresh spends one token and
-- adds the next to the chain. Presenting a spent token again revokes the chain.
CREATE TABLE oauth_refresh_tokens (
    id             uuid PRIMARY KEY,
    chain_id       uuid NOT NULL,
    token_hash     text NOT NULL UNIQUE,
    site_id        uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id      text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes         text[] NOT NULL DEFAULT '{}',
    auth_time      timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    spent_at       timestamptz,
    revoked_at     timestamptz,
    -- the response that spent this token, encrypted with a key derived from
    -- the token itself, so a client whose response was lost can retry within
    -- the grace period; cleared after it
    grace_response bytea
);
CREATE INDEX oauth_refresh_tokens_chain_idx ON oauth_refresh_tokens (chain_id);

-- Access tokens are JWTs verified locally; this row (keyed by the jti) lets
-- them be revoked, and dies with its user.
CREATE TABLE oauth_access_tokens (
    id         uuid PRIMARY KEY,
    chain_id   uuid,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX oauth_access_tokens_chain_idx ON oauth_access_tokens (chain_id);
CREATE INDEX oauth_access_tokens_expires_idx ON oauth_access_tokens (expires_at);

-- Failed password attempts, per username and per client address, so
-- throttling holds across every API replica.
CREATE TABLE oauth_login_failures (
    key          text PRIMARY KEY,
    failures     integer NOT NULL,
    window_start timestamptz NOT NULL,
    locked_until timestamptz
);
