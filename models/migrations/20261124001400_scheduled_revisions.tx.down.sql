DROP INDEX revisions_scheduled_idx;
ALTER TABLE revisions DROP COLUMN reverts_id;
ALTER TABLE revisions DROP COLUMN publish_at;
ALTER TABLE revisions DROP CONSTRAINT revisions_status_check;
UPDATE revisions SET status = 'failed', error_message = coalesce(error_message, 'cancelled') WHERE status IN ('scheduled', 'cancelled');
ALTER TABLE revisions ADD CONSTRAINT revisions_status_check CHECK (status IN ('publishing', 'published', 'failed'));
