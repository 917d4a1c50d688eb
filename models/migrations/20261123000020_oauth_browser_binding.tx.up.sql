-- An authorization request is bound to the browser that started it: the
-- SHA-256 (hex) of the random nonce /oauth/authorize puts in an HttpOnly
-- cookie. The login form and the code are only for a browser that presents
-- that cookie. Requests made before this migration have '' and can no longer
-- be completed (they expire within ten minutes); codes already issued still
-- work.
ALTER TABLE oauth_auth_requests ADD COLUMN browser_hash text NOT NULL DEFAULT '';
ALTER TABLE oauth_auth_requests ALTER COLUMN browser_hash DROP DEFAULT;
