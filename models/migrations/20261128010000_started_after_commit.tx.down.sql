DROP INDEX IF EXISTS asset_uploads_unstarted_idx;
DROP INDEX IF EXISTS revisions_unstarted_idx;
ALTER TABLE asset_uploads DROP COLUMN IF EXISTS etag, DROP COLUMN IF EXISTS started_at;
ALTER TABLE revisions DROP COLUMN IF EXISTS started_at;
