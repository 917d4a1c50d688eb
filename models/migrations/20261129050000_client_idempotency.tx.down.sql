DROP INDEX IF EXISTS revisions_client_idempotency_idx;
ALTER TABLE revisions DROP COLUMN IF EXISTS oauth_client_id;
