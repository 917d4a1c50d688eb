ALTER TABLE oauth_auth_requests DROP COLUMN browser_hash;
