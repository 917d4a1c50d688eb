package activities

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/webhooks"
	"github.com/pressroom/pressroom/workflows"
)

// SendReviewReminder writes a reminder once per key, none for a request
// answered in the database (a verdict after it, whose Update may not have
// reached the workflow), and reports a published release as ended.
func TestSendReviewReminderLooksAtTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testsupport.NewDatabase(t)
	site, err := models.CreateSite(ctx, db, "Reviews", "reviews")
	if err != nil {
		t.Fatal(err)
	}
	hook := &models.Webhook{SiteRecord: models.NewSiteRecord(site.ID), URL: "https://receiver.example/hook",
		Events: []string{webhooks.ReleaseReviewReminder}, Active: true, SecretSealed: []byte("sealed"), SecretLast4: "abcd", Version: 1}
	if err := models.CreateWebhook(ctx, db, hook); err != nil {
		t.Fatal(err)
	}
	rel := &drafts.Release{SiteRecord: models.NewSiteRecord(site.ID), Title: "Reviewed"}
	if err := drafts.CreateRelease(ctx, db, rel); err != nil {
		t.Fatal(err)
	}
	review := func(verdict string, at time.Time) uuid.UUID {
		t.Helper()
		rv := &drafts.ReleaseReview{SiteRecord: models.SiteRecordOf(uuid.New(), site.ID, at), ReleaseID: rel.ID, Verdict: verdict, Drafts: map[string]int{}}
		if _, err := db.NewInsert().Model(rv).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		return rv.ID
	}
	req := review(drafts.VerdictRequested, time.Now().UTC().Add(-time.Hour))
	r := &Reviews{DB: db.DB}
	remind := func(n int) workflows.ReminderOutcome {
		t.Helper()
		out, err := r.SendReviewReminder(ctx, workflows.ReviewReminder{SiteID: site.ID.String(), ReleaseID: rel.ID.String(), RequestID: req.String(), N: n,
			Key: workflows.ReleaseReviewID(rel.ID.String()) + "/reminder/" + req.String() + "/1"})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	deliveries := func() int {
		t.Helper()
		var n int
		if err := db.NewRaw("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = ?", hook.ID).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if out := remind(1); out.Ended || out.Answered {
		t.Fatalf("a pending request: %+v", out)
	}
	remind(1) // retried after its commit
	if n := deliveries(); n != 1 {
		t.Errorf("%d deliveries of one reminder written twice, want 1", n)
	}
	review(drafts.VerdictApproved, time.Now().UTC())
	if out := remind(2); out.Ended || !out.Answered {
		t.Errorf("a request with an approval after it: %+v, want answered", out)
	}
	if _, err := db.NewUpdate().Model(rel).Set("status = ?", drafts.ReleasePublished).WherePK().Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if out := remind(2); !out.Ended {
		t.Errorf("a published release: %+v, want ended", out)
	}
	if ended, err := r.ReleaseEnded(ctx, site.ID.String(), rel.ID.String()); err != nil || !ended {
		t.Errorf("ReleaseEnded = %v, %v", ended, err)
	}
	if n := deliveries(); n != 1 {
		t.Errorf("%d deliveries in all, want the one reminder", n)
	}
}
