DROP INDEX IF EXISTS asset_uploads_user_idx;
DROP INDEX IF EXISTS versions_user_idx;
DROP INDEX IF EXISTS drafts_user_idx;
