DELETE FROM oauth_clients WHERE id IN (SELECT client_id FROM site_clients);
DROP TABLE site_clients;
DELETE FROM oauth_access_tokens WHERE user_id IS NULL;
ALTER TABLE oauth_access_tokens ALTER COLUMN user_id SET NOT NULL;
