package models

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DeliveryChannel is the Postgres NOTIFY channel that wakes the worker's
// webhook dispatcher. NOTIFY is transactional: it is delivered only when
// the transaction that recorded the event commits.
const DeliveryChannel = "pressroom_webhook_deliveries"

// Event is what RecordEvent records: an event type (webhooks.Events) of a
// site about one subject, named by its JSON:API type and id.
type Event struct {
	SiteID      uuid.UUID
	Type        string
	SubjectType string // "revisions", "asset-uploads", "drafts", "themes", "releases", "release-reviews", "webhooks"
	SubjectID   uuid.UUID
	// ID is the event's id; zero draws a new one. A caller that may write
	// one event twice (an activity retried after its commit: the review
	// workflow's, activities/reviews.go) gives a deterministic one, and the
	// second write writes nothing (no event, no delivery).
	ID uuid.UUID
}

// EventKeyID is the event id of a deterministic event key (Event.ID).
func EventKeyID(key string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("pressroom:event:"+key))
}

// subjectTables are the tables of the subjects events report, and the
// columns of a subject's row the event does not copy (a webhook's sealed
// secret stays in its row).
var subjectTables = map[string]struct {
	table string
	omit  []string
}{
	"revisions":     {table: "revisions"},
	"asset-uploads": {table: "asset_uploads"},
	"drafts":        {table: "drafts"},
	"themes":        {table: "themes"},
	"releases":      {table: "releases"},
	// The review events' subject: the review (its drafts' versions stay in
	// the row).
	"release-reviews": {table: "release_reviews", omit: []string{"drafts"}},
	"webhooks":        {table: "webhooks", omit: []string{"secret_sealed"}},
}

// DefaultWebhookPendingLimit is PRESSROOM_WEBHOOK_PENDING_LIMIT's default:
// the most pending deliveries a webhook may have queued behind one that
// keeps failing before RecordEvent deactivates it.
const DefaultWebhookPendingLimit = 1000

// pendingLimitSetting is the session setting that carries the limit from
// the process's configuration to RecordEvent's statement (set for every
// connection by WithWebhookPendingLimit), so the many callers of
// RecordEvent need not pass it along.
const pendingLimitSetting = "pressroom.webhook_pending_limit"

// WithWebhookPendingLimit sets the pending limit RecordEvent enforces on
// every connection Open makes (PRESSROOM_WEBHOOK_PENDING_LIMIT; without it,
// DefaultWebhookPendingLimit). A transaction may override it with
// SET LOCAL pressroom.webhook_pending_limit.
func WithWebhookPendingLimit(n int) Option {
	return func(cfg *pgx.ConnConfig) {
		if cfg.RuntimeParams == nil {
			cfg.RuntimeParams = map[string]string{}
		}
		cfg.RuntimeParams[pendingLimitSetting] = strconv.Itoa(n)
	}
}

// recorded is what RecordEvent's statement reports.
type recorded struct {
	Deliveries int `bun:"deliveries"`
	Limit      int `bun:"pending_limit"`
	// Over lists the subscribed webhooks past the pending limit, which got
	// no delivery: {"id", "error"} (the error their queue's head keeps failing with).
	Over []overLimit `bun:"over,type:jsonb"`
}

type overLimit struct {
	ID    uuid.UUID `json:"id"`
	Error string    `json:"error"`
}

// RecordEvent writes e into the outbox in tx, the transaction of the change
// it reports, with one pending delivery per active webhook of the site
// subscribed to its type: if the change commits, so do they; if it rolls
// back, nothing was announced. The subject's row is copied as the change
// left it (so a reverted draft can still be shown). A site without such a
// webhook costs one statement and writes nothing. After the commit the
// worker's dispatcher starts a workflow per delivery (NOTIFY wakes it; the
// scheduled sweep catches what a crash left behind).
//
// It bounds each webhook's queue (docs/webhooks.md, "Bounded queues"): a
// subscribed webhook whose oldest pending delivery's last attempt failed,
// and which has the pending limit of deliveries pending already, gets no
// delivery of e: it is deactivated (DeactivateWebhook, which records
// webhook.deactivated) and the dispatcher fails its queue. The count is
// cheap: one index probe per subscribed webhook for its queue's head, and
// only behind a failing head a count along the same index, stopped at the
// limit. Concurrent transactions each count what committed before them, so
// a queue may pass the limit by the events of its site being committed at
// that moment; the next event deactivates it.
//
// Call it inside the existing transaction, after the change, e.g.
//
//	models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID,
//		Type: webhooks.RevisionScheduled, SubjectType: "revisions", SubjectID: rev.ID})
func RecordEvent(ctx context.Context, tx bun.IDB, e Event) error {
	subject, ok := subjectTables[e.SubjectType]
	if !ok {
		return fmt.Errorf("record event %s: unknown subject type %q", e.Type, e.SubjectType)
	}
	omit := subject.omit
	if omit == nil {
		omit = []string{} // '{}': subtracting NULL would make the subject NULL
	}
	var r recorded
	// The CASE evaluates the count only behind a failing head (an AND
	// would leave the order to the planner). Its ORDER BY seq is the
	// pending index's order: without it, a planner that cannot know the
	// LIMIT may pick a scan of the whole table.
	id := e.ID
	if id == uuid.Nil {
		id = uuid.New()
	}
	err := tx.NewRaw(`WITH lim AS (
			SELECT coalesce(nullif(current_setting(?7, true), '')::int, ?8) AS n
		), hooks AS (
			SELECT w.id, head.last_error, CASE WHEN head.last_error IS NULL THEN false
				ELSE (SELECT count(*) FROM (SELECT FROM webhook_deliveries p WHERE p.webhook_id = w.id AND p.status = ?9
					ORDER BY p.seq LIMIT (SELECT n FROM lim)) queued) >= (SELECT n FROM lim) END AS over
			FROM webhooks w LEFT JOIN LATERAL (SELECT h.last_error FROM webhook_deliveries h
				WHERE h.webhook_id = w.id AND h.status = ?9 ORDER BY h.seq LIMIT 1) head ON true
			WHERE w.site_id = ?0 AND w.active AND ?1 = ANY (w.events)
		), ok AS (
			SELECT id FROM hooks WHERE NOT over
		), ev AS (
			INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
			SELECT ?2, ?0, ?1, ?3, ?4, coalesce((SELECT to_jsonb(t) - ?6::text[] FROM ?5 t WHERE t.id = ?4), 'null'::jsonb), clock_timestamp()
			WHERE EXISTS (SELECT 1 FROM ok)
			ON CONFLICT (id) DO NOTHING
			RETURNING id, seq, created_at
		), d AS (
			INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, created_at)
			SELECT gen_random_uuid(), ?0, ok.id, ev.id, ev.seq, ?1, ev.created_at FROM ok, ev
			RETURNING 1
		) SELECT (SELECT count(*) FROM d) AS deliveries, (SELECT n FROM lim) AS pending_limit,
			(SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'error', last_error)), '[]') FROM hooks WHERE over) AS over`,
		e.SiteID, e.Type, id, e.SubjectType, e.SubjectID, bun.Ident(subject.table), pgdialect.Array(omit),
		pendingLimitSetting, DefaultWebhookPendingLimit, DeliveryPending).Scan(ctx, &r)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Type, err)
	}
	for _, o := range r.Over {
		reason := fmt.Sprintf("%d deliveries were pending, the most a webhook may have queued (PRESSROOM_WEBHOOK_PENDING_LIMIT), behind one that keeps failing: %s",
			r.Limit, o.Error)
		if _, err := DeactivateWebhook(ctx, tx, e.SiteID, o.ID, reason); err != nil {
			return fmt.Errorf("record event %s: %w", e.Type, err)
		}
	}
	if r.Deliveries == 0 {
		return nil
	}
	if err := notifyDispatcher(ctx, tx, e.SiteID); err != nil {
		return fmt.Errorf("record event %s: notify: %w", e.Type, err)
	}
	return nil
}
