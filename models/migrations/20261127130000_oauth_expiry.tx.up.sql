-- The hourly prune of expired OAuth rows (models/oauthprune.go) deletes, a
-- batch at a time, the oldest expired authorization requests and refresh
-- tokens; without these indexes every batch would scan the whole table
-- (oauth_access_tokens has one since 20261121000002). Built in the
-- migration's transaction (not CONCURRENTLY): it holds off sign-ins and
-- refreshes while it builds, a short while on tables of one narrow row per
-- sign-in request and per token.
CREATE INDEX oauth_auth_requests_expires_idx ON oauth_auth_requests (expires_at);
CREATE INDEX oauth_refresh_tokens_expires_idx ON oauth_refresh_tokens (expires_at);
