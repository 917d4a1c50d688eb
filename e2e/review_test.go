package e2e

// Review before publishing (issue 30 §1, docs/releases.md "Review"): the
// site's release-approvals, requests and verdicts, four eyes, approvals
// that lapse when a draft changes or the staged set changes, the 409
// approval_required of a direct or unapproved publish, a scheduled
// release whose approval lapsed, and tenancy.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressroom/pressroom/models"
)

// setApprovals sets the site's release-approvals through PATCH /site.
func (e *editor) setApprovals(n int) *doc {
	e.t.Helper()
	return e.do(http.MethodPatch, "/site", map[string]any{"data": map[string]any{"type": "sites", "attributes": map[string]any{"release-approvals": n}}})
}

// review posts a review of release with verdict.
func (e *editor) review(release, verdict string) *doc {
	e.t.Helper()
	return e.do(http.MethodPost, "/release-reviews", map[string]any{"data": map[string]any{"type": "release-reviews",
		"attributes": map[string]any{"verdict": verdict, "comment": "looks " + verdict}, "relationships": map[string]any{"release": ref("releases", release)}}})
}

func (e *editor) mustReview(release, verdict string) resource {
	e.t.Helper()
	d := e.review(release, verdict)
	if d.Status != 201 {
		e.t.Fatalf("POST /release-reviews %s = %d %s", verdict, d.Status, d.Raw)
	}
	return d.resource(e.t)
}

// releaseState is a release's status and approvals-count.
func (e *editor) releaseState(release string) string {
	e.t.Helper()
	r := e.do(http.MethodGet, "/releases/"+release, nil).resource(e.t)
	return fmt.Sprintf("%v %v/%v", r.Attributes["status"], r.Attributes["approvals-count"], r.Attributes["approvals-required"])
}

// reviewTeam is a site requiring one approval, with its admin, an author
// and an editor of the whole site.
type reviewTeam struct {
	s                 *system
	admin, author, ed *editor
}

func newReviewTeam(t *testing.T) reviewTeam {
	s := start(t)
	rt := reviewTeam{s: s, admin: s.editor(t, "editor@demo.test"), author: s.member(t, "author@demo.test", models.RoleAuthor, ""),
		ed: s.member(t, "ed@demo.test", models.RoleEditor, "")}
	if d := rt.admin.setApprovals(1); d.Status != 200 {
		t.Fatalf("release-approvals 1 = %d %s", d.Status, d.Raw)
	}
	return rt
}

// requested is a release of drafts, staged by the author, who requested
// its review.
func (rt reviewTeam) requested(title string, drafts ...string) string {
	rel := rt.author.createRelease(title)
	rt.author.mustStage(rel, drafts...)
	rt.author.mustReview(rel, "requested")
	return rel
}

// releasesWithStatus lists the ids of GET /releases?filter[status]=status.
func (e *editor) releasesWithStatus(status string) []string {
	e.t.Helper()
	return e.do(http.MethodGet, "/releases?filter[status]="+status, nil).ids(e.t)
}

func wantApprovalRequired(t *testing.T, what string, d *doc) {
	t.Helper()
	if d.Status != 409 || len(d.Errors) == 0 || d.Errors[0].Code != "approval_required" || !strings.Contains(string(d.Raw), `"approvals-required":1`) {
		t.Errorf("%s = %d %s, want 409 approval_required with the counts in meta", what, d.Status, d.Raw)
	}
}

func TestReviewRequestApprovePublish(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	author := s.member(t, "author@demo.test", models.RoleAuthor, "")
	ed := s.member(t, "ed@demo.test", models.RoleEditor, "")

	if d := author.setApprovals(1); d.Status != http.StatusForbidden {
		t.Errorf("an author's PATCH /site = %d, want 403", d.Status)
	}
	if d := admin.setApprovals(6); d.Status != 422 || d.Errors[0].Code != "invalid_approvals" {
		t.Errorf("release-approvals 6 = %d %s, want 422", d.Status, d.Raw)
	}
	if d := admin.setApprovals(1); d.Status != 200 || d.resource(t).Attributes["release-approvals"] != float64(1) {
		t.Fatalf("release-approvals 1 = %d %s", d.Status, d.Raw)
	}

	page, draft := author.page("Reviewed page", "reviewed", "")
	rel := author.createRelease("Reviewed")
	author.mustStage(rel, draft)
	if got := author.releaseState(rel); got != "open 0/1" {
		t.Errorf("a new release: %s, want open 0/1", got)
	}
	wantApprovalRequired(t, "a direct publish while approvals are required", ed.publish(draft))
	wantApprovalRequired(t, "publishing a release never reviewed", ed.publishRelease(rel))

	req := author.mustReview(rel, "requested")
	if req.Attributes["stale"] != false || req.Attributes["comment"] != "looks requested" {
		t.Errorf("the request: %v", req.Attributes)
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after the request: %s, want in-review 0/1", got)
	}
	// The author may not approve (no publish), nor may anyone approve a
	// release holding a draft they last changed (four eyes).
	if d := author.review(rel, "approved"); d.Status != http.StatusForbidden {
		t.Errorf("the author's own approval = %d %s, want 403", d.Status, d.Raw)
	}
	_, edDraft := ed.page("Editor's own", "eds-own", "")
	own := ed.createRelease("Editor's own")
	ed.mustStage(own, edDraft)
	if d := ed.review(own, "approved"); d.Status != http.StatusForbidden || d.Errors[0].Code != "own_approval" || !strings.Contains(d.Errors[0].Detail, "four eyes") {
		t.Errorf("approving a release of one's own draft = %d %s, want 403 own_approval", d.Status, d.Raw)
	}

	ed.mustReview(rel, "approved")
	if got := author.releaseState(rel); got != "approved 1/1" {
		t.Errorf("after the approval: %s, want approved 1/1", got)
	}
	if a, r := author.releasesWithStatus("approved"), author.releasesWithStatus("in-review"); !slices.Contains(a, rel) || slices.Contains(r, rel) {
		t.Errorf("after the approval: filter[status]=approved %v, in-review %v; want it approved only", a, r)
	}

	// An edit after the approval: stale, in review again, publishing 409.
	if d := author.do(http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page,
		"attributes": map[string]any{"title": "Reviewed page, edited"}}}); d.Status != 200 {
		t.Fatalf("edit = %d %s", d.Status, d.Raw)
	}
	reviews := resources(t, author.do(http.MethodGet, "/releases/"+rel+"/reviews", nil))
	if len(reviews) != 2 || reviews[0].Attributes["verdict"] != "requested" || reviews[1].Attributes["verdict"] != "approved" || reviews[1].Attributes["stale"] != true {
		t.Errorf("reviews after the edit (oldest first, the approval stale): %+v", reviews)
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after the edit: %s, want in-review 0/1", got)
	}
	if a, r := author.releasesWithStatus("approved"), author.releasesWithStatus("in-review"); slices.Contains(a, rel) || !slices.Contains(r, rel) {
		t.Errorf("after the edit: filter[status]=approved %v, in-review %v; want it in review only", a, r)
	}
	wantApprovalRequired(t, "publishing after the approval lapsed", ed.publishRelease(rel))

	// Approved again, it publishes.
	ed.mustReview(rel, "approved")
	if d := ed.publishRelease(rel); d.Status != 201 {
		t.Fatalf("publishing the approved release = %d %s", d.Status, d.Raw)
	}
	if got := author.do(http.MethodGet, "/releases/"+rel, nil).resource(t).Attributes["status"]; got != "published" {
		t.Errorf("the release after publishing: %v", got)
	}
	// A rollback stays allowed while approvals are required.
	revs := resources(t, ed.do(http.MethodGet, "/revisions", nil))
	if len(revs) == 0 {
		t.Fatal("no revision")
	}
	if d := ed.do(http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"relationships": map[string]any{"reverts": ref("revisions", revs[0].ID)}}}); d.Status != 201 && d.Status != 202 {
		t.Errorf("a rollback while approvals are required = %d %s", d.Status, d.Raw)
	}
}

func TestReviewStagingLapsesApprovals(t *testing.T) {
	t.Parallel()
	rt := newReviewTeam(t)
	author, ed := rt.author, rt.ed
	_, a := author.page("Lapse A", "lapse-a", "")
	_, b := author.page("Lapse B", "lapse-b", "")
	rel := rt.requested("Lapse", a)
	ed.mustReview(rel, "approved")
	author.mustStage(rel, b)
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after staging another draft: %s, want in-review 0/1", got)
	}
	ed.mustReview(rel, "approved")
	if d := author.stage(http.MethodDelete, rel, b); d.Status != 204 {
		t.Fatalf("unstage = %d", d.Status)
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after unstaging: %s, want in-review 0/1", got)
	}
	// A verdict of changes is a verdict: it counts no approval.
	ed.mustReview(rel, "changes-requested")
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after changes-requested: %s, want in-review 0/1", got)
	}
}

// TestReviewScheduledApprovalLapses: a release scheduled while approved
// whose draft is edited before the timer fires does not publish; its
// revision fails saying the approval lapsed and the release is in review.
func TestReviewScheduledApprovalLapses(t *testing.T) {
	t.Parallel()
	rt := newReviewTeam(t)
	author, ed := rt.author, rt.ed
	page, draft := author.page("Scheduled review", "scheduled-review", "")
	rel := rt.requested("Scheduled", draft)
	ed.mustReview(rel, "approved")
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	d := ed.do(http.MethodPost, "/revisions", map[string]any{"data": map[string]any{"type": "revisions",
		"attributes": map[string]any{"comments": "scheduled", "publish-at": at}, "relationships": map[string]any{"release": ref("releases", rel)}}})
	if d.Status != 201 {
		t.Fatalf("scheduling the approved release = %d %s", d.Status, d.Raw)
	}
	rev := d.resource(t).ID
	if e := author.do(http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page,
		"attributes": map[string]any{"title": "Edited while scheduled"}}}); e.Status != 200 {
		t.Fatalf("edit while scheduled = %d %s", e.Status, e.Raw)
	}
	ed.fireSoon(rev)
	r, _ := ed.awaitStatus(rev, "scheduled", time.Minute)
	if r.Attributes["status"] == "publishing" {
		r, _ = ed.awaitStatus(rev, "publishing", time.Minute)
	}
	if r.Attributes["status"] != "failed" || !strings.Contains(fmt.Sprint(r.Attributes["error-message"]), "approval lapsed") {
		t.Errorf("the scheduled revision: %v, %v; want failed, the approval lapsed", r.Attributes["status"], r.Attributes["error-message"])
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("the release after the lapsed publish: %s, want in-review 0/1", got)
	}
	if got := author.do(http.MethodGet, "/pages?filter[path]=/scheduled-review", nil).ids(t); len(got) != 0 {
		t.Errorf("the page went live: %v", got)
	}
}

// TestReviewCoversThePulledInDrafts: an approval covers what publishing
// the release publishes, not only what is staged. A child page's create
// staged alone pulls in its new parent's create: the parent's author may
// not approve it (four eyes), and an edit of the parent's draft, never
// staged, lapses the approval.
func TestReviewCoversThePulledInDrafts(t *testing.T) {
	t.Parallel()
	rt := newReviewTeam(t)
	admin, author, ed := rt.admin, rt.author, rt.ed
	parent, _ := admin.page("New section", "new-section", "")
	_, child := author.page("Child", "child", parent)
	rel := rt.requested("Child only", child)
	if d := admin.review(rel, "approved"); d.Status != http.StatusForbidden || d.Errors[0].Code != "own_approval" {
		t.Errorf("approval by the author of a pulled-in draft = %d %s, want 403 own_approval", d.Status, d.Raw)
	}
	ed.mustReview(rel, "approved")
	if got := author.releaseState(rel); got != "approved 1/1" {
		t.Fatalf("after the approval: %s, want approved 1/1", got)
	}
	if d := admin.do(http.MethodPatch, "/pages/"+parent, map[string]any{"data": map[string]any{"type": "pages", "id": parent,
		"attributes": map[string]any{"title": "New section, renamed"}}}); d.Status != 200 {
		t.Fatalf("editing the parent's draft = %d %s", d.Status, d.Raw)
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after an edit of the pulled-in parent: %s, want in-review 0/1", got)
	}
	wantApprovalRequired(t, "publishing after the pulled-in parent changed", ed.publishRelease(rel))
	ed.mustReview(rel, "approved")
	if d := ed.publishRelease(rel); d.Status != 201 {
		t.Fatalf("publishing the release approved again = %d %s", d.Status, d.Raw)
	}
}

// TestReviewSectionEditorVerdicts: an editor whose rights are narrowed to
// a section cannot give a verdict on a release that publishes a page
// outside it (403); an editor of the whole site can.
func TestReviewSectionEditorVerdicts(t *testing.T) {
	t.Parallel()
	rt := newReviewTeam(t)
	author, ed := rt.author, rt.ed
	blog := rt.s.member(t, "blog@demo.test", models.RoleEditor, "/blog/")
	_, draft := author.page("About us", "about-us", "")
	rel := rt.requested("Outside the blog", draft)
	for _, verdict := range []string{"approved", "changes-requested"} {
		if d := blog.review(rel, verdict); d.Status != http.StatusForbidden || !strings.Contains(d.Errors[0].Detail, "outside your section /blog/") {
			t.Errorf("a section editor's %s of a page outside the section = %d %s, want 403", verdict, d.Status, d.Raw)
		}
	}
	ed.mustReview(rel, "approved")
	if got := author.releaseState(rel); got != "approved 1/1" {
		t.Errorf("after the whole-site editor's approval: %s, want approved 1/1", got)
	}
}

// TestReviewUnderConcurrentEdits: approvals and requests race 32 edits of
// the release's staged pages (more requests at once than the API's pool
// has connections; edits and reviews lock the drafts and the release in
// opposite orders): every request answers 200 or 201, never a 5xx, and the
// review state is consistent afterwards: one more edit lapses whatever was
// approved, and a fresh approval counts.
func TestReviewUnderConcurrentEdits(t *testing.T) {
	t.Parallel()
	rt := newReviewTeam(t)
	author, ed := rt.author, rt.ed
	var pages, drafts []string
	for i := range 8 {
		p, d := author.page(fmt.Sprintf("Raced %d", i), fmt.Sprintf("raced-%d", i), "")
		pages, drafts = append(pages, p), append(drafts, d)
	}
	rel := rt.requested("Raced", drafts...)
	var wg sync.WaitGroup
	statuses := make(chan string, 48)
	for i := range 32 {
		wg.Go(func() {
			p := pages[i%len(pages)]
			d := author.do(http.MethodPatch, "/pages/"+p, map[string]any{"data": map[string]any{"type": "pages", "id": p,
				"attributes": map[string]any{"title": fmt.Sprintf("Raced edit %d", i)}}})
			statuses <- fmt.Sprintf("PATCH %d %.300s", d.Status, d.Raw)
		})
	}
	for i := range 8 {
		wg.Go(func() {
			verdict := "approved"
			by := ed
			if i%2 == 1 {
				verdict, by = "requested", author
			}
			d := by.review(rel, verdict)
			statuses <- fmt.Sprintf("%s %d %.300s", verdict, d.Status, d.Raw)
		})
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if f := strings.Fields(st); f[1] != "200" && f[1] != "201" {
			t.Errorf("under concurrent edits and reviews: %s", st)
		}
	}
	if d := author.do(http.MethodPatch, "/pages/"+pages[0], map[string]any{"data": map[string]any{"type": "pages", "id": pages[0],
		"attributes": map[string]any{"title": "The last edit"}}}); d.Status != 200 {
		t.Fatalf("the last edit = %d %s", d.Status, d.Raw)
	}
	if got := author.releaseState(rel); got != "in-review 0/1" {
		t.Errorf("after the last edit: %s, want in-review 0/1", got)
	}
	ed.mustReview(rel, "approved")
	if got := author.releaseState(rel); got != "approved 1/1" {
		t.Errorf("after a fresh approval: %s, want approved 1/1", got)
	}
}

// TestReviewDirectScheduledBeforeApprovals: a revision naming drafts
// directly, scheduled while the site required no approvals, does not
// publish once the site requires them: it fails saying so, and the page
// stays a draft. Drafts go live only through an approved release.
func TestReviewDirectScheduledBeforeApprovals(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	_, draft := admin.page("Scheduled directly", "scheduled-directly", "")
	rev := admin.mustSchedule(time.Now().Add(5*time.Second), draft)
	if d := admin.setApprovals(1); d.Status != 200 {
		t.Fatalf("release-approvals 1 = %d %s", d.Status, d.Raw)
	}
	r, _ := admin.awaitStatus(rev.ID, "scheduled", time.Minute)
	if r.Attributes["status"] == "publishing" {
		r, _ = admin.awaitStatus(rev.ID, "publishing", time.Minute)
	}
	if r.Attributes["status"] != "failed" || !strings.Contains(fmt.Sprint(r.Attributes["error-message"]), "requires 1 approval") {
		t.Errorf("the direct revision scheduled before approvals: %v, %v; want failed, approval required", r.Attributes["status"], r.Attributes["error-message"])
	}
	if got := admin.do(http.MethodGet, "/pages?filter[path]=/scheduled-directly", nil).ids(t); len(got) != 0 {
		t.Errorf("the page went live without an approved release: %v", got)
	}
}

func TestReviewTenancy(t *testing.T) {
	t.Parallel()
	s := start(t)
	demo := s.editor(t, "editor@demo.test")
	other := s.editor(t, "editor@other.test")
	_, draft := demo.page("Review tenancy", "review-tenancy", "")
	rel := demo.createRelease("Mine")
	demo.mustStage(rel, draft)
	req := demo.mustReview(rel, "requested")
	for _, p := range []string{"/releases/" + rel + "/reviews", "/release-reviews/" + req.ID, "/release-reviews/" + req.ID + "/release"} {
		if st := other.status(p); st != 404 {
			t.Errorf("another site's GET %s = %d, want 404", p, st)
		}
	}
	if d := other.review(rel, "requested"); d.Status != 404 || d.Errors[0].Source.Pointer != "/data/relationships/release/data/id" {
		t.Errorf("reviewing another site's release = %d %s, want 404 at the relationship", d.Status, d.Raw)
	}
	if st := demo.status("/release-reviews/" + req.ID); st != 200 {
		t.Errorf("one's own review = %d", st)
	}
}
