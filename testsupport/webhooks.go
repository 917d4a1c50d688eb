package testsupport

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// DeliveryRunning is a pending delivery whose workflow was started and
// attempted: in progress. (The table's status is still pending; only
// started_at and attempts tell it from a queued one.)
const DeliveryRunning = "running"

// WebhookHistory writes webhook events and deliveries of one site straight
// into a test database, at chosen times, for tests of what reads or prunes
// the history (models.PruneWebhookHistory).
type WebhookHistory struct {
	t      testing.TB
	db     *Database
	SiteID uuid.UUID
	hooks  []uuid.UUID
}

// NewWebhookHistory creates a site named slug in db to write history for.
func NewWebhookHistory(t testing.TB, db *Database, slug string) *WebhookHistory {
	t.Helper()
	site, err := models.CreateSite(context.Background(), db, slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	return &WebhookHistory{t: t, db: db, SiteID: site.ID}
}

// hook returns the site's i-th webhook, creating webhooks up to it.
func (h *WebhookHistory) hook(i int) uuid.UUID {
	h.t.Helper()
	for len(h.hooks) <= i {
		w := &models.Webhook{SiteRecord: models.NewSiteRecord(h.SiteID), URL: "https://receiver.example/hook",
			Events: []string{"draft.reverted"}, Active: true, SecretSealed: []byte("sealed"), SecretLast4: "abcd", Version: 1}
		if _, err := h.db.NewInsert().Model(w).Exec(context.Background()); err != nil {
			h.t.Fatal(err)
		}
		h.hooks = append(h.hooks, w.ID)
	}
	return h.hooks[i]
}

// Event writes an event created at `at` with one delivery per status
// (models.DeliveryPending: queued, never started; DeliveryRunning;
// models.DeliverySucceeded; models.DeliveryFailed), each to another
// webhook of the site (one delivery per event and webhook), and returns
// the event's id and its deliveries' ids in the order given.
func (h *WebhookHistory) Event(at time.Time, statuses ...string) (uuid.UUID, []uuid.UUID) {
	h.t.Helper()
	ctx := context.Background()
	event := uuid.New()
	var seq int64
	if err := h.db.NewRaw(`INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
		VALUES (?, ?, 'draft.reverted', 'drafts', ?, 'null', ?) RETURNING seq`, event, h.SiteID, uuid.New(), at).Scan(ctx, &seq); err != nil {
		h.t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(statuses))
	for i, status := range statuses {
		d := models.WebhookDelivery{SiteRow: models.SiteRow{ID: uuid.New(), SiteID: h.SiteID, CreatedAt: at},
			WebhookID: h.hook(i), EventID: event, Seq: seq, Event: "draft.reverted", Status: status}
		switch status {
		case DeliveryRunning:
			d.Status, d.Attempts, d.StartedAt = models.DeliveryPending, 1, &at
		case models.DeliverySucceeded, models.DeliveryFailed:
			d.Attempts, d.StartedAt = 1, &at
		}
		if _, err := h.db.NewInsert().Model(&d).Exec(ctx); err != nil {
			h.t.Fatal(err)
		}
		ids[i] = d.ID
	}
	return event, ids
}

// Exist tells which of the ids are rows of table (webhook_events or
// webhook_deliveries).
func (h *WebhookHistory) Exist(table string, ids ...uuid.UUID) map[uuid.UUID]bool {
	h.t.Helper()
	var found []uuid.UUID
	if len(ids) > 0 {
		err := h.db.NewSelect().Table(table).Column("id").Where("id IN (?)", bun.In(ids)).Scan(context.Background(), &found)
		if err != nil {
			h.t.Fatal(err)
		}
	}
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range found {
		out[id] = true
	}
	return out
}
