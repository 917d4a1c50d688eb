package models

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/webhooks"
)

// The store of webhook delivery queues (docs/webhooks.md, "Ordering" and
// "Bounded queues"): finding the head of each webhook's queue for the
// worker's dispatcher and sweep, marking heads started, deactivating a
// webhook, and failing the queue of an inactive one.
//
// Every query here walks webhook_deliveries_pending_idx (webhook_id, seq)
// WHERE status = 'pending' one webhook at a time, so its cost is the
// number of webhooks looked at, never the number of deliveries queued
// behind their heads: a webhook stuck with a long queue costs a dispatch
// one index probe (models: TestDispatchCostDoesNotGrowWithABacklog).

// DeliveryHead is the head of a webhook's queue, its oldest pending
// delivery, locked for its dispatch.
type DeliveryHead struct {
	ID        uuid.UUID `bun:"id,type:uuid"`
	SiteID    uuid.UUID `bun:"site_id,type:uuid"`
	WebhookID uuid.UUID `bun:"webhook_id,type:uuid"`
	// Active tells whether its webhook is active: the head of an inactive
	// webhook is not started, its queue is failed (FailInactiveQueues).
	Active bool `bun:"active"`
}

// HeadQuery says which heads LockDeliveryHeads looks at.
type HeadQuery struct {
	// Sites limits the look to the webhooks of these sites (the sites
	// whose events woke the dispatcher); nil looks at every webhook with a
	// pending delivery.
	Sites []uuid.UUID
	// Started includes heads whose workflow was started already (the
	// sweep); otherwise only unstarted ones are taken.
	Started bool
	// After continues a walk: only webhooks whose id sorts after it.
	After uuid.UUID
	// Limit bounds the heads looked at.
	Limit int
}

// HeadBatch is one batch of a walk over heads.
type HeadBatch struct {
	// Heads are the heads found and locked (SKIP LOCKED: one that another
	// dispatcher holds is left to it).
	Heads []DeliveryHead
	// Next continues the walk (HeadQuery.After) while More.
	Next uuid.UUID
	More bool
}

// candidate is a head found before it is locked.
type candidate struct {
	ID        uuid.UUID `bun:"id,type:uuid"`
	WebhookID uuid.UUID `bun:"webhook_id,type:uuid"`
}

// LockDeliveryHeads finds up to q.Limit heads of webhook queues, in
// webhook id order after q.After, and locks them in tx (FOR UPDATE SKIP
// LOCKED, so several dispatchers share the work). A head is the oldest
// pending delivery of its webhook; an active webhook's head is for its
// caller to start (MarkDeliveriesStarted), an inactive one's queue to fail
// (FailInactiveQueues).
//
// With q.Sites, it probes each webhook of those sites (webhooks_site_idx,
// then one probe of webhook_deliveries_pending_idx each). Without, it
// skips along webhook_deliveries_pending_idx from one webhook to the next
// (a recursive query: one probe per webhook with a pending delivery).
func LockDeliveryHeads(ctx context.Context, tx bun.IDB, q HeadQuery) (HeadBatch, error) {
	if q.Limit <= 0 {
		return HeadBatch{}, fmt.Errorf("find webhook queue heads: limit %d is not positive", q.Limit)
	}
	if q.Sites != nil && len(q.Sites) == 0 {
		return HeadBatch{Next: q.After}, nil
	}
	var found []candidate
	var err error
	if q.Sites != nil {
		err = tx.NewRaw(`SELECT h.id, w.id AS webhook_id FROM webhooks w
			CROSS JOIN LATERAL (SELECT p.id, p.started_at FROM webhook_deliveries p
				WHERE p.webhook_id = w.id AND p.status = ? ORDER BY p.seq LIMIT 1) h
			WHERE w.site_id IN (?) AND w.id > ? AND `+takes("h", "w", q.Started)+`
			ORDER BY w.id LIMIT ?`, DeliveryPending, bun.In(q.Sites), q.After, q.Limit).Scan(ctx, &found)
	} else {
		err = tx.NewRaw(`WITH RECURSIVE heads AS (
				(SELECT p.webhook_id, p.id, p.started_at FROM webhook_deliveries p
					WHERE p.status = ?0 AND p.webhook_id > ?1 ORDER BY p.webhook_id, p.seq LIMIT 1)
				UNION ALL
				SELECT n.webhook_id, n.id, n.started_at FROM heads
				CROSS JOIN LATERAL (SELECT p.webhook_id, p.id, p.started_at FROM webhook_deliveries p
					WHERE p.status = ?0 AND p.webhook_id > heads.webhook_id ORDER BY p.webhook_id, p.seq LIMIT 1) n
			) SELECT h.id, h.webhook_id FROM heads h JOIN webhooks w ON w.id = h.webhook_id
			WHERE `+takes("h", "w", q.Started)+` LIMIT ?2`,
			DeliveryPending, q.After, q.Limit).Scan(ctx, &found)
	}
	if err != nil {
		return HeadBatch{}, fmt.Errorf("find webhook queue heads: %w", err)
	}
	batch := HeadBatch{Next: q.After, More: len(found) == q.Limit}
	if len(found) == 0 {
		return batch, nil
	}
	ids := make([]uuid.UUID, len(found))
	for i, c := range found {
		ids[i] = c.ID
		if bytes.Compare(c.WebhookID[:], batch.Next[:]) > 0 { // as Postgres orders uuids
			batch.Next = c.WebhookID
		}
	}
	// Still pending (and still to take) once locked: a head may have
	// ended, or been started by another dispatcher, since it was found.
	if err := tx.NewRaw(`SELECT d.id, d.site_id, d.webhook_id, w.active FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id
		WHERE d.id IN (?) AND d.status = ? AND `+takes("d", "w", q.Started)+`
		ORDER BY d.webhook_id FOR UPDATE OF d SKIP LOCKED`, bun.In(ids), DeliveryPending).Scan(ctx, &batch.Heads); err != nil {
		return HeadBatch{}, fmt.Errorf("lock webhook queue heads: %w", err)
	}
	return batch, nil
}

// takes is the condition on a head (the delivery alias d of the webhook
// alias w) for a HeadQuery's Started: with it, every head; without, the
// unstarted ones, and those of inactive webhooks, whose queues are to fail
// whether their head was started or not (it usually was: a webhook
// deactivated for its pending limit is stuck behind a head being retried).
func takes(d, w string, started bool) string {
	if started {
		return "true"
	}
	return "(" + d + ".started_at IS NULL OR NOT " + w + ".active)"
}

// MarkDeliveriesStarted records that the workflows of the deliveries ids
// were started (the first start only).
func MarkDeliveriesStarted(ctx context.Context, db bun.IDB, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).Set("started_at = coalesce(started_at, now())").
		Where("id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("mark deliveries started: %w", err)
	}
	return nil
}

// InactiveQueueBatch bounds the deliveries one statement of
// FailInactiveQueues fails: each is its own short transaction.
const InactiveQueueBatch = 1000

// InactiveDeliveryError is the last error of a delivery failed because
// its webhook is inactive.
const InactiveDeliveryError = "the webhook is inactive"

// FailInactiveQueues fails the pending deliveries of those of the webhooks
// ids that are inactive, InactiveQueueBatch per statement, and returns how
// many. A delivery's earlier error is kept after the reason, as a give-up
// keeps it. Rows another transaction holds are skipped (the next dispatch
// or the delivery's own workflow fails them); a webhook made active again
// meanwhile keeps its queue.
func FailInactiveQueues(ctx context.Context, db bun.IDB, webhookIDs []uuid.UUID) (int, error) {
	failed := 0
	for len(webhookIDs) > 0 {
		res, err := db.NewRaw(`UPDATE webhook_deliveries d SET status = ?0, next_attempt_at = NULL,
				last_error = CASE WHEN d.last_error IS NULL THEN ?1 ELSE ?1 || ' (last error: ' || d.last_error || ')' END
			WHERE d.id IN (SELECT p.id FROM webhook_deliveries p JOIN webhooks w ON w.id = p.webhook_id AND NOT w.active
				WHERE p.webhook_id IN (?2) AND p.status = ?3 LIMIT ?4 FOR UPDATE OF p SKIP LOCKED)`,
			DeliveryFailed, InactiveDeliveryError, bun.In(webhookIDs), DeliveryPending, InactiveQueueBatch).Exec(ctx)
		if err != nil {
			return failed, fmt.Errorf("fail the queues of inactive webhooks: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return failed, fmt.Errorf("fail the queues of inactive webhooks: %w", err)
		}
		failed += int(n)
		if n < InactiveQueueBatch {
			return failed, nil
		}
	}
	return failed, nil
}

// DeactivateWebhook makes the site's webhook id inactive because of
// reason (when it was active), in tx: the webhook records when and why,
// the event webhook.deactivated is recorded (RecordEvent: the site's other
// webhooks subscribed to it hear of it), and the dispatcher is woken to
// fail its queue. It tells whether it deactivated the webhook: false when
// it was inactive already (or gone), so a concurrent deactivation records
// one event.
func DeactivateWebhook(ctx context.Context, tx bun.IDB, siteID, id uuid.UUID, reason string) (bool, error) {
	res, err := tx.NewUpdate().Model((*Webhook)(nil)).
		Set("active = false, deactivated_at = ?, deactivated_reason = ?, updated_at = now(), version = version + 1", time.Now().UTC(), reason).
		Where("id = ? AND site_id = ? AND active", id, siteID).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("deactivate webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if err := RecordEvent(ctx, tx, Event{SiteID: siteID, Type: webhooks.WebhookDeactivated, SubjectType: "webhooks", SubjectID: id}); err != nil {
		return false, err
	}
	// RecordEvent notifies only when it wrote deliveries; the queue of the
	// deactivated webhook is the dispatcher's to fail either way.
	if err := notifyDispatcher(ctx, tx, siteID); err != nil {
		return false, fmt.Errorf("deactivate webhook: %w", err)
	}
	return true, nil
}

// notifyDispatcher wakes the worker's dispatcher for the site when the
// transaction commits (NOTIFY is transactional; identical notifications
// of one transaction are delivered once).
func notifyDispatcher(ctx context.Context, db bun.IDB, siteID uuid.UUID) error {
	_, err := db.NewRaw("SELECT pg_notify(?, ?)", DeliveryChannel, siteID.String()).Exec(ctx)
	return err
}

// DeliveryTurnRow is what deciding a delivery's turn reads of it: its
// status and place in its webhook's queue, and whether that webhook is
// active (nil: the webhook is gone).
type DeliveryTurnRow struct {
	ID        uuid.UUID `bun:"id"`
	Status    string    `bun:"status"`
	WebhookID uuid.UUID `bun:"webhook_id"`
	Seq       int64     `bun:"seq"`
	Active    *bool     `bun:"active"`
}

// LoadDeliveryTurn reads the delivery deliveryID with its webhook's
// active flag; sql.ErrNoRows (IsNoRows) when it is gone.
func LoadDeliveryTurn(ctx context.Context, db bun.IDB, deliveryID string) (DeliveryTurnRow, error) {
	var row DeliveryTurnRow
	err := db.NewRaw(`SELECT d.id, d.status, d.webhook_id, d.seq, w.active FROM webhook_deliveries d
		LEFT JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?`, deliveryID).Scan(ctx, &row)
	return row, err
}

// EarlierPendingDelivery returns the id of the first pending delivery to
// webhookID queued before seq, or "" when there is none.
func EarlierPendingDelivery(ctx context.Context, db bun.IDB, webhookID uuid.UUID, seq int64) (string, error) {
	var before []string
	if err := db.NewSelect().Model((*WebhookDelivery)(nil)).Column("id").
		Where("webhook_id = ? AND status = ? AND seq < ?", webhookID, DeliveryPending, seq).
		OrderExpr("seq").Limit(1).Scan(ctx, &before); err != nil {
		return "", fmt.Errorf("find earlier deliveries: %w", err)
	}
	if len(before) == 0 {
		return "", nil
	}
	return before[0], nil
}

// DeliveryToSend is a delivery with what sending it needs: its webhook's
// URL, active flag and sealed secret, and its event.
type DeliveryToSend struct {
	WebhookDelivery `bun:",extend"`
	URL             string    `bun:"url"`
	Active          bool      `bun:"active"`
	SecretSealed    []byte    `bun:"secret_sealed"`
	EventType       string    `bun:"event_type"`
	SubjectType     string    `bun:"subject_type"`
	SubjectID       uuid.UUID `bun:"subject_id"`
	Subject         []byte    `bun:"subject"`
	EventAt         time.Time `bun:"event_at"`
}

// LoadDeliveryToSend reads the delivery deliveryID with its webhook and
// event; sql.ErrNoRows (IsNoRows) when it is gone.
func LoadDeliveryToSend(ctx context.Context, db bun.IDB, deliveryID string) (DeliveryToSend, error) {
	var d DeliveryToSend
	err := db.NewSelect().Model(&d).
		ColumnExpr("delivery.*, w.url, w.active, w.secret_sealed, e.type AS event_type, e.subject_type, e.subject_id, e.subject, e.created_at AS event_at").
		Join("JOIN webhooks w ON w.id = delivery.webhook_id").
		Join("JOIN webhook_events e ON e.id = delivery.event_id").
		Where("delivery.id = ?", deliveryID).Scan(ctx)
	return d, err
}

// SucceedDelivery records the pending delivery id's successful attempt:
// the receiver's code and the start of its answer.
func SucceedDelivery(ctx context.Context, db bun.IDB, id uuid.UUID, code int, snippet string) error {
	_, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).
		Set("status = ?, attempts = attempts + 1, last_status_code = ?, last_error = NULL, last_response = ?, next_attempt_at = NULL, delivered_at = now()",
			DeliverySucceeded, code, snippet).
		Where("id = ? AND status = ?", id, DeliveryPending).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	return nil
}

// RecordDeliveryAttempt records a failed attempt of the pending delivery
// id that will be retried at next (nil: not again).
func RecordDeliveryAttempt(ctx context.Context, db bun.IDB, id uuid.UUID, code *int, msg string, snippet *string, next *time.Time) error {
	_, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).
		Set("attempts = attempts + 1, last_status_code = ?, last_error = ?, last_response = ?, next_attempt_at = ?", code, msg, snippet, next).
		Where("id = ? AND status = ?", id, DeliveryPending).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	return nil
}

// FailDelivery fails the pending delivery id with msg; with a code, as an
// attempt that the receiver answered (code and snippet recorded).
func FailDelivery(ctx context.Context, db bun.IDB, id uuid.UUID, code *int, msg string, snippet *string) error {
	q := db.NewUpdate().Model((*WebhookDelivery)(nil)).Set("status = ?, last_error = ?, next_attempt_at = NULL", DeliveryFailed, msg)
	if code != nil {
		q = q.Set("attempts = attempts + 1, last_status_code = ?, last_response = ?", *code, snippet)
	}
	if _, err := q.Where("id = ? AND status = ?", id, DeliveryPending).Exec(ctx); err != nil {
		return fmt.Errorf("fail delivery: %w", err)
	}
	return nil
}

// GiveUpDelivery fails the pending delivery deliveryID with failure, its
// last error kept after it.
func GiveUpDelivery(ctx context.Context, db bun.IDB, deliveryID, failure string) error {
	if _, err := db.NewUpdate().Model((*WebhookDelivery)(nil)).
		Set("status = ?, next_attempt_at = NULL, last_error = CASE WHEN last_error IS NULL THEN ? ELSE ? || ' (last error: ' || last_error || ')' END",
			DeliveryFailed, failure, failure).
		Where("id = ? AND status = ?", deliveryID, DeliveryPending).Exec(ctx); err != nil {
		return fmt.Errorf("fail delivery: %w", err)
	}
	return nil
}

// NextPendingDelivery returns the first pending delivery (id, site and
// webhook only) queued to the webhook of deliveryID other than it, or nil.
func NextPendingDelivery(ctx context.Context, db bun.IDB, deliveryID string) (*WebhookDelivery, error) {
	var next []WebhookDelivery
	err := db.NewRaw(`SELECT n.id, n.site_id, n.webhook_id FROM webhook_deliveries d JOIN webhook_deliveries n
		ON n.webhook_id = d.webhook_id AND n.status = 'pending' AND n.id <> d.id
		WHERE d.id = ? ORDER BY n.seq LIMIT 1`, deliveryID).Scan(ctx, &next)
	if err != nil {
		return nil, fmt.Errorf("find the next delivery: %w", err)
	}
	if len(next) == 0 {
		return nil, nil
	}
	return &next[0], nil
}
