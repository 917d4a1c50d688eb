-- Scheduled revisions (publish-at, status scheduled/cancelled) and
-- revisions that revert another (reverts_id).
ALTER TABLE revisions DROP CONSTRAINT revisions_status_check;
ALTER TABLE revisions ADD CONSTRAINT revisions_status_check
    CHECK (status IN ('scheduled', 'publishing', 'published', 'failed', 'cancelled'));
ALTER TABLE revisions ADD COLUMN publish_at timestamptz;
ALTER TABLE revisions ADD COLUMN reverts_id uuid REFERENCES revisions (id) ON DELETE SET NULL;
-- GET /revisions?filter[status]=scheduled lists what is coming, by publish-at.
CREATE INDEX revisions_scheduled_idx ON revisions (site_id, publish_at) WHERE status = 'scheduled';
