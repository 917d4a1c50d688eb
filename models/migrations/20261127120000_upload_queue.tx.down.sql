DROP INDEX asset_uploads_queue_idx;
ALTER TABLE asset_uploads DROP COLUMN dispatched_at, DROP COLUMN queued_at;
