package models

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// WebhookPruneBatch bounds the rows one pruning statement deletes: each
// statement is its own short transaction, so none holds row locks or
// builds a large delete for long, whatever the backlog.
const WebhookPruneBatch = 5000

// PrunedWebhookHistory counts what PruneWebhookHistory deleted.
type PrunedWebhookHistory struct {
	Deliveries int `json:"deliveries"`
	Events     int `json:"events"`
}

// PruneWebhookHistory deletes the webhook history created before cutoff
// (docs/webhooks.md, "Retention"), batch rows per statement, looping until
// none is left:
//
//  1. deliveries that ended (succeeded or failed), oldest first;
//  2. then events that no delivery refers to any more (theirs were
//     pruned, or their webhooks deleted).
//
// A pending delivery (queued, or being attempted) is never deleted, nor
// the event it points at: an event goes only when it has no delivery at
// all, so the foreign key's cascade from events to deliveries never
// fires. A delivery retried by hand meanwhile is pending again and stays;
// rows another transaction holds locked are skipped until the next run.
// Running it twice, or at once on two workers, is harmless. progress, if
// not nil, is called after every statement with the totals so far (the
// activity heartbeats there). It touches webhook_deliveries and
// webhook_events only, across every site: retention is the same for all.
func PruneWebhookHistory(ctx context.Context, db bun.IDB, cutoff time.Time, batch int, progress func(PrunedWebhookHistory)) (PrunedWebhookHistory, error) {
	var done PrunedWebhookHistory
	if batch <= 0 {
		return done, fmt.Errorf("prune webhook history: batch %d is not positive", batch)
	}
	args := []any{DeliveryPending, cutoff, batch}
	steps := []PruneStep{
		// status <> pending matches webhook_deliveries_finished_idx's
		// predicate word for word, so the planner walks that index.
		{What: "webhook deliveries", Count: &done.Deliveries, Args: args, Query: `DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE status <> ?0 AND created_at < ?1
			ORDER BY created_at LIMIT ?2 FOR UPDATE SKIP LOCKED)`},
		{What: "webhook events", Count: &done.Events, Args: args, Query: `DELETE FROM webhook_events WHERE id IN (
			SELECT id FROM webhook_events e WHERE created_at < ?1
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
			ORDER BY created_at LIMIT ?2 FOR UPDATE SKIP LOCKED)`},
	}
	err := PruneInBatches(ctx, db, batch, steps, func() {
		if progress != nil {
			progress(done)
		}
	})
	return done, err
}
