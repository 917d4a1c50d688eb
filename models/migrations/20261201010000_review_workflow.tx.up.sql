-- Durable review (issue 30 §2, docs/releases.md "Durable review"): the API
-- commits a review, then sends it to the release's review workflow as a
-- Temporal Update; notified_at records that the workflow accepted it
-- (NULL: not yet). The worker's commit sweep sends what a crash or a
-- Temporal outage between the commit and the Update left unnotified
-- (docs/architecture.md, "From a commit to a workflow").
ALTER TABLE release_reviews ADD COLUMN notified_at timestamptz;

-- Reviews recorded before the workflow existed have none to reach.
UPDATE release_reviews SET notified_at = created_at;

-- The commit sweep's read: nearly always empty.
CREATE INDEX release_reviews_unnotified_idx ON release_reviews (created_at) WHERE notified_at IS NULL;
