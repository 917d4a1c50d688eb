package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// An audit carried in the context is recorded once per request, in the
// transaction it is recorded in: a rolled-back transaction leaves no row,
// the next one records it; without an audit nothing is written.
func TestRecordAuditInTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Audit", "audit-record")
	if err != nil {
		t.Fatal(err)
	}
	if err := models.RecordAudit(ctx, db); err != nil { // no audit: nothing
		t.Fatal(err)
	}
	user := uuid.New()
	a := models.NewAudit("pages.update", "pages", &site.ID, &user, "", "req-1", "192.0.2.1")
	a.SetItem("p1")
	a.AddChanged("title", "slug", "title")
	actx := models.WithAudit(ctx, a)
	boom := errors.New("boom")
	err = db.RunInTx(actx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := models.RecordAudit(ctx, tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	a.RolledBack()
	for range 2 { // the second is a no-op: one event per request
		if err := db.RunInTx(actx, nil, func(ctx context.Context, tx bun.Tx) error { return models.RecordAudit(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := models.ListAuditEvents(ctx, db, site.ID, models.AuditFilter{Limit: 10})
	if err != nil || more || len(got) != 1 {
		t.Fatalf("%d events (more %v, %v), want 1", len(got), more, err)
	}
	e := got[0]
	if e.Action != "pages.update" || *e.ItemID != "p1" || *e.UserID != user || e.OAuthClientID != nil ||
		len(e.Changed) != 2 || e.Changed[0] != "title" || e.Changed[1] != "slug" || e.RequestID != "req-1" || e.ClientAddress != "192.0.2.1" {
		t.Errorf("recorded %+v", e)
	}
}

// Cursor pages walk a site's events newest first, each once, also when
// several share a created_at; another site's never appear; the prune
// deletes exactly the older ones, in batches, and a second run nothing.
func TestAuditListAndPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Audit", "audit-list")
	if err != nil {
		t.Fatal(err)
	}
	other, err := models.CreateSite(ctx, db, "Other", "audit-other")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	insert := func(siteID uuid.UUID, at time.Time) {
		if _, err := db.NewRaw(`INSERT INTO audit_events (id, site_id, action, item_type, created_at) VALUES (?, ?, 'pages.create', 'pages', ?)`,
			uuid.New(), siteID, at).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 7 {
		insert(site.ID, now.Add(-time.Duration(i/2)*time.Minute)) // pairs share a time
		insert(other.ID, now)
	}
	old := now.Add(-400 * 24 * time.Hour)
	for range 5 {
		insert(site.ID, old)
	}
	var seen []uuid.UUID
	f := models.AuditFilter{Limit: 3}
	for {
		page, more, err := models.ListAuditEvents(ctx, db, site.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			if *e.SiteID != site.ID {
				t.Fatalf("another site's event %+v", e)
			}
			if n := len(seen); n > 0 {
				if prev := seen[n-1]; prev == e.ID {
					t.Fatalf("event %s twice", e.ID)
				}
			}
			seen = append(seen, e.ID)
		}
		if !more {
			break
		}
		f.After = models.AuditCursor(page[len(page)-1])
	}
	if len(seen) != 12 {
		t.Errorf("paged %d events, want 12", len(seen))
	}
	if _, _, err := models.ListAuditEvents(ctx, db, site.ID, models.AuditFilter{Limit: 3, After: "%%"}); !errors.Is(err, models.ErrBadCursor) {
		t.Errorf("a malformed cursor: %v, want ErrBadCursor", err)
	}
	var calls int
	p, err := models.PruneAuditEvents(ctx, db, now.Add(-365*24*time.Hour), 2, func(models.PrunedAuditEvents) { calls++ })
	if err != nil || p.Events != 5 || calls != 3 {
		t.Errorf("prune: %+v in %d statements (%v), want 5 in 3", p, calls, err)
	}
	if p, err := models.PruneAuditEvents(ctx, db, now.Add(-365*24*time.Hour), 2, nil); err != nil || p.Events != 0 {
		t.Errorf("second prune: %+v (%v), want nothing", p, err)
	}
	if n, err := db.NewSelect().Table("audit_events").Count(ctx); err != nil || n != 14 {
		t.Errorf("%d events left (%v), want 14", n, err)
	}
}
