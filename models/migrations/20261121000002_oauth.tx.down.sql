DROP TABLE oauth_login_failures;
DROP TABLE oauth_access_tokens;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_auth_requests;
DROP TABLE oauth_signing_keys;
DELETE FROM oauth_clients WHERE id = 'pressroom';
