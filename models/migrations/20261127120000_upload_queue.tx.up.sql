-- The per-site upload queue (docs/assets.md, "The queue"): every valid
-- notice is accepted; a site's uploads then take one of its
-- PRESSROOM_SITE_UPLOAD_LIMIT processing slots in the order they were
-- noticed. queued_at orders an attempt among its site's waiting uploads;
-- dispatched_at is set when it takes a slot (NULL while it waits). Both
-- matter only while status is 'processing'.
ALTER TABLE asset_uploads
    ADD COLUMN queued_at     timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN dispatched_at timestamptz;

-- Uploads processing now were started by the code before the queue: they
-- are being processed, so they hold slots.
UPDATE asset_uploads SET queued_at = updated_at, dispatched_at = updated_at WHERE status = 'processing';

-- The queue's reads: a site's processing uploads, slot holders and waiting
-- ones in order (the notice's counts, a waiting upload's position, the next
-- ones to wake). Finished and failed uploads, nearly all rows, are not in it.
CREATE INDEX asset_uploads_queue_idx ON asset_uploads (site_id, queued_at, id) WHERE status = 'processing';
