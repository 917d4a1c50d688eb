-- Webhook retention (models/webhookprune.go): the hourly prune deletes, a
-- batch at a time, finished deliveries and then events older than
-- PRESSROOM_WEBHOOK_RETENTION. Each batch takes the oldest rows by
-- created_at; without these indexes every batch would scan the table from
-- its start, past the dead rows of the batches before it.
-- Built in the migration's transaction (not CONCURRENTLY): the tables are
-- days old, so the build is short; it holds off webhook writes meanwhile.
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at) WHERE status <> 'pending';
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);
