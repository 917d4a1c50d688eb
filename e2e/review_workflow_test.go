package e2e

// Durable review (issue 30 §2, docs/releases.md "Durable review"): each
// release under review is the workflow release-review-<id>; requests and
// verdicts reach it after their commit and it sends their webhook events;
// a request with no verdict is reminded of every PRESSROOM_REVIEW_REMINDER,
// 3 times at most, through a worker's SIGKILL and a Temporal restart, each
// reminder exactly once; a publish or a cancel ends it.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
	"github.com/pressroom/pressroom/workflows"
)

// reviewEvents are the events of the review workflow.
var reviewEvents = []string{"release.review-requested", "release.approved", "release.changes-requested", "release.review-reminder"}

// reviewMessage is what a receiver got of a review event.
type reviewMessage struct {
	Type, ID string // the event type; the webhook-id header (one per event)
	Subject  string // the review's id
	Release  string // its release relationship
}

// reviewMessages decodes what rcv received.
func reviewMessages(t *testing.T, rcv *receiver) []reviewMessage {
	t.Helper()
	var out []reviewMessage
	for _, r := range rcv.requests() {
		var msg struct {
			Type string
			Data struct {
				Data struct {
					Type, ID      string
					Relationships map[string]struct{ Data *struct{ Type, ID string } }
				}
			}
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil {
			t.Fatalf("body %s: %v", r.Body, err)
		}
		m := reviewMessage{Type: msg.Type, ID: r.ID, Subject: msg.Data.Data.ID}
		if rel := msg.Data.Data.Relationships["release"].Data; rel != nil && msg.Data.Data.Type == "release-reviews" {
			m.Release = rel.ID
		}
		out = append(out, m)
	}
	return out
}

// countReview counts the messages of type typ, and the distinct events among them.
func countReview(ms []reviewMessage, typ string) (n, distinct int) {
	seen := map[string]bool{}
	for _, m := range ms {
		if m.Type == typ {
			n++
			seen[m.ID] = true
		}
	}
	return n, len(seen)
}

// awaitReview waits until rcv got n messages of type typ.
func awaitReview(t *testing.T, rcv *receiver, typ string, n int, within time.Duration) []reviewMessage {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ms := reviewMessages(t, rcv)
		if got, _ := countReview(ms, typ); got >= n {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s within %s, want %d: %+v", func() int { g, _ := countReview(ms, typ); return g }(), typ, within, n, ms)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// reviewedRelease sets release-approvals 1 and stages an author's draft in
// a new release: the author and an editor who may approve it.
func reviewedRelease(t *testing.T, s *system, title string) (author, ed *editor, rel string) {
	t.Helper()
	admin := s.editor(t, "editor@demo.test")
	if d := admin.setApprovals(1); d.Status != 200 {
		t.Fatalf("release-approvals 1 = %d %s", d.Status, d.Raw)
	}
	author = s.member(t, "author@demo.test", models.RoleAuthor, "")
	ed = s.member(t, "ed@demo.test", models.RoleEditor, "")
	_, draft := author.page(title, "reviewed-"+strings.ToLower(title), "")
	rel = author.createRelease(title)
	author.mustStage(rel, draft)
	return author, ed, rel
}

// A request and an approval each send their event once, naming the review
// and its release; the publish ends the review's workflow, and a cancel
// ends another's.
func TestReviewWorkflowEventsAndEnd(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	admin.createWebhook(rcv.URL+"/hook", reviewEvents...)
	author, ed, rel := reviewedRelease(t, s, "Approved")

	req := author.mustReview(rel, "requested")
	approval := ed.mustReview(rel, "approved")
	ms := awaitReview(t, rcv, "release.approved", 1, time.Minute)
	ms = awaitReview(t, rcv, "release.review-requested", 1, time.Minute)
	for typ, subject := range map[string]string{"release.review-requested": req.ID, "release.approved": approval.ID} {
		if n, _ := countReview(ms, typ); n != 1 {
			t.Errorf("%d %s, want 1", n, typ)
		}
		for _, m := range ms {
			if m.Type == typ && (m.Subject != subject || m.Release != rel) {
				t.Errorf("%s names review %s of release %s, want %s of %s", typ, m.Subject, m.Release, subject, rel)
			}
		}
	}
	wfID := workflows.ReleaseReviewID(rel)
	desc, err := s.Temporal.DescribeWorkflowExecution(context.Background(), wfID, "")
	if err != nil {
		t.Fatal(err)
	}
	if sa := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields(); sa["PressroomReleaseId"] == nil || sa["PressroomSiteId"] == nil {
		t.Errorf("the review's search attributes: %v", sa)
	}
	if n := s.count(t, "SELECT count(*) FROM release_reviews WHERE release_id = ? AND notified_at IS NULL", rel); n != 0 {
		t.Errorf("%d reviews not marked notified", n)
	}

	d := ed.publishRelease(rel)
	if d.Status != 201 {
		t.Fatalf("publish the approved release = %d %s", d.Status, d.Raw)
	}
	s.awaitWorkflow(t, wfID, time.Minute)
	s.recordHistory(t, wfID, "release-review-published.history.json")
	s.recordHistory(t, workflows.PublishRevisionID(d.resource(t).ID), "publish-revision-release-v4.history.json")

	_, other := author.page("Dropped", "dropped-review", "")
	dropped := author.createRelease("Dropped")
	author.mustStage(dropped, other)
	author.mustReview(dropped, "requested")
	if d := author.do(http.MethodDelete, "/releases/"+dropped, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}
	s.awaitWorkflow(t, workflows.ReleaseReviewID(dropped), time.Minute)
	s.recordHistory(t, workflows.ReleaseReviewID(dropped), "release-review-cancelled.history.json")
	if n, _ := countReview(reviewMessages(t, rcv), "release.review-reminder"); n != 0 {
		t.Errorf("%d reminders with PRESSROOM_REVIEW_REMINDER 24h", n)
	}
}

// Reminders on a shortened PRESSROOM_REVIEW_REMINDER survive a worker's
// SIGKILL and a Temporal restart while one is pending: the receiver counts
// the request once and exactly 3 reminders, each once.
func TestReviewRemindersSurviveRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test: restarts a Temporal dev server")
	}
	t.Parallel()
	const every = 6 * time.Second
	build := testsupport.BuildPressroom(t)
	temporal := testsupport.StartPrivateTemporal(t)
	s := startWithoutWorker(t, func(c *config.Config) {
		c.TemporalAddress = temporal.Address
		c.ReviewReminder = every
	})
	w1 := s.startWorkerProcess(t, build(), t.TempDir(), "worker-1")
	admin := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	admin.createWebhook(rcv.URL+"/hook", reviewEvents...)
	author, _, rel := reviewedRelease(t, s, "Reminded")

	req := author.mustReview(rel, "requested")
	awaitReview(t, rcv, "release.review-requested", 1, time.Minute)
	wfID := workflows.ReleaseReviewID(rel)
	s.awaitTimer(t, wfID) // the first reminder's timer is pending

	w1.Kill()
	<-w1.Exited()
	temporal.Stop(t)
	t.Log("worker killed, Temporal stopped, a reminder pending")
	temporal.Start(t)
	s.startWorkerProcess(t, build(), t.TempDir(), "worker-2")

	awaitReview(t, rcv, "release.review-reminder", workflows.MaxReviewReminders, 3*time.Minute)
	time.Sleep(3 * every) // long enough for a 4th, which must not come
	ms := reviewMessages(t, rcv)
	if n, distinct := countReview(ms, "release.review-requested"); n != 1 || distinct != 1 {
		t.Errorf("review-requested received %d times (%d events), want once", n, distinct)
	}
	n, distinct := countReview(ms, "release.review-reminder")
	if n != workflows.MaxReviewReminders || distinct != workflows.MaxReviewReminders {
		t.Errorf("reminders received %d times (%d events), want %d, each once: %+v", n, distinct, workflows.MaxReviewReminders, ms)
	}
	for _, m := range ms {
		if m.Type == "release.review-reminder" && (m.Subject != req.ID || m.Release != rel) {
			t.Errorf("a reminder names review %s of release %s, want the request %s of %s", m.Subject, m.Release, req.ID, rel)
		}
	}
	// The cancel ends the review, which had sent all its reminders.
	if d := author.do(http.MethodDelete, "/releases/"+rel, nil); d.Status != 204 {
		t.Fatalf("cancel = %d %s", d.Status, d.Raw)
	}
	s.awaitWorkflow(t, wfID, time.Minute)
	s.recordHistory(t, wfID, "release-review-reminded.history.json")
}

// A review committed while no worker can take its Update (every worker
// down) is recorded and answered 201 all the same; the commit sweep of the
// first worker back sends it, and its event arrives once.
func TestReviewSentByTheCommitSweep(t *testing.T) {
	t.Parallel()
	s := startWithoutWorker(t)
	admin := s.editor(t, "editor@demo.test")
	rcv := newReceiver(t, nil)
	admin.createWebhook(rcv.URL+"/hook", reviewEvents...)
	author, _, rel := reviewedRelease(t, s, "Swept")

	began := time.Now()
	req := author.mustReview(rel, "requested")
	if took := time.Since(began); took > workflows.ReviewNoticeWait+5*time.Second {
		t.Errorf("the request took %s with no worker, want at most the notice wait (%s) and change", took, workflows.ReviewNoticeWait)
	}
	if n := s.count(t, "SELECT count(*) FROM release_reviews WHERE id = ? AND notified_at IS NULL", req.ID); n != 1 {
		t.Fatalf("the review is marked notified with no worker to accept it")
	}
	s.startWorker(t)
	awaitReview(t, rcv, "release.review-requested", 1, 2*time.Minute)
	deadline := time.Now().Add(time.Minute)
	for s.count(t, "SELECT count(*) FROM release_reviews WHERE id = ? AND notified_at IS NULL", req.ID) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the commit sweep did not mark the review notified")
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a second delivery would come now
	if n, distinct := countReview(reviewMessages(t, rcv), "release.review-requested"); n != 1 || distinct != 1 {
		t.Errorf("review-requested received %d times (%d events), want once", n, distinct)
	}
}
