package models

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
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
	SubjectType string // "revisions", "asset-uploads", "drafts", "themes"
	SubjectID   uuid.UUID
}

// subjectTables are the tables of the subjects events report.
var subjectTables = map[string]string{
	"revisions":     "revisions",
	"asset-uploads": "asset_uploads",
	"drafts":        "drafts",
	"themes":        "themes",
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
// Call it inside the existing transaction, after the change, e.g.
//
//	models.RecordEvent(ctx, tx, models.Event{SiteID: rev.SiteID,
//		Type: webhooks.RevisionScheduled, SubjectType: "revisions", SubjectID: rev.ID})
func RecordEvent(ctx context.Context, tx bun.IDB, e Event) error {
	table, ok := subjectTables[e.SubjectType]
	if !ok {
		return fmt.Errorf("record event %s: unknown subject type %q", e.Type, e.SubjectType)
	}
	var n int
	err := tx.NewRaw(`WITH hooks AS (
			SELECT id FROM webhooks WHERE site_id = ?0 AND active AND ?1 = ANY (events)
		), ev AS (
			INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
			SELECT ?2, ?0, ?1, ?3, ?4, coalesce((SELECT to_jsonb(t) FROM ?5 t WHERE t.id = ?4), 'null'::jsonb), clock_timestamp()
			WHERE EXISTS (SELECT 1 FROM hooks)
			RETURNING id, seq, created_at
		), d AS (
			INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, created_at)
			SELECT gen_random_uuid(), ?0, hooks.id, ev.id, ev.seq, ?1, ev.created_at FROM hooks, ev
			RETURNING 1
		) SELECT count(*) FROM d`,
		e.SiteID, e.Type, uuid.New(), e.SubjectType, e.SubjectID, bun.Ident(table)).Scan(ctx, &n)
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.Type, err)
	}
	if n == 0 {
		return nil
	}
	if _, err := tx.NewRaw("SELECT pg_notify(?, '')", DeliveryChannel).Exec(ctx); err != nil {
		return fmt.Errorf("record event %s: notify: %w", e.Type, err)
	}
	return nil
}
