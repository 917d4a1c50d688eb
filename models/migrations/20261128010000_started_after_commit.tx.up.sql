-- From a commit to a workflow (docs/architecture.md): the API commits an
-- upload attempt or a revision first and starts its workflow after the
-- commit; started_at records that start (NULL: not started yet). The
-- worker's commit sweep starts what a crash between the commit and the
-- start left unstarted. An upload's row also keeps the ETag of the object
-- its notice named, so the sweep can start its ingestion with the input the
-- API would have given it.
ALTER TABLE asset_uploads
    ADD COLUMN etag       text NOT NULL DEFAULT '',
    ADD COLUMN started_at timestamptz;
ALTER TABLE revisions ADD COLUMN started_at timestamptz;

-- Rows in flight now were started inside their transaction (the code
-- before): their workflows exist.
UPDATE asset_uploads SET started_at = updated_at WHERE status = 'processing';
UPDATE revisions SET started_at = created_at WHERE status IN ('publishing', 'scheduled');

-- The commit sweep's reads: nearly always empty.
CREATE INDEX asset_uploads_unstarted_idx ON asset_uploads (queued_at) WHERE status = 'processing' AND started_at IS NULL;
CREATE INDEX revisions_unstarted_idx ON revisions (created_at) WHERE status IN ('publishing', 'scheduled') AND started_at IS NULL;
