CREATE INDEX webhook_deliveries_unstarted_idx ON webhook_deliveries (seq) WHERE started_at IS NULL;
ALTER TABLE webhooks DROP COLUMN deactivated_reason, DROP COLUMN deactivated_at;
