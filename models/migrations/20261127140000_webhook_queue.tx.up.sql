-- Webhook queues (docs/webhooks.md, "Bounded queues"):
--
-- A webhook Pressroom deactivates itself (its receiver answered 410, or
-- PRESSROOM_WEBHOOK_PENDING_LIMIT deliveries queued behind one that keeps
-- failing) says when and why; PATCH active: true clears both.
ALTER TABLE webhooks ADD COLUMN deactivated_at timestamptz, ADD COLUMN deactivated_reason text;

-- The dispatcher no longer looks for unstarted deliveries across every
-- site (that walked a stuck webhook's whole queue on every dispatch): it
-- finds each webhook's head along webhook_deliveries_pending_idx
-- (models/deliverystore.go). This index served only that query, and every
-- recorded event paid for it.
DROP INDEX webhook_deliveries_unstarted_idx;
