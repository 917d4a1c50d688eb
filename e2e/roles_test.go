package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/auth"
	"github.com/pressroom/pressroom/models"
)

// Roles (issue 28, sections 1 and 2): each route declares a permission
// (the OpenAPI description's x-permission, generated from the route
// table); each built-in role is a fixed set of permissions (models/roles.go,
// docs/auth.md).

// member creates a user of the demo site with role, narrowed to prefix
// when it is not "", and signs them in.
func (s *system) member(t *testing.T, email string, role models.Role, prefix string) *editor {
	t.Helper()
	hash, _ := auth.HashPassword(password)
	var section *string
	if prefix != "" {
		section = &prefix
	}
	if _, err := models.CreateMember(context.Background(), s.DB, s.Site.ID, email, "Member", hash, role, section); err != nil {
		t.Fatal(err)
	}
	return s.editor(t, email)
}

// routePermissions reads every operation's x-permission from the system's
// own /openapi.json: the route table, as clients see it.
func (s *system) routePermissions(t *testing.T) map[[2]string]models.Permission {
	t.Helper()
	resp, err := s.http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var spec struct {
		Paths map[string]map[string]struct {
			Permission string `json:"x-permission"`
			Security   []any  `json:"security"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&spec); err != nil {
		t.Fatal(err)
	}
	out := map[[2]string]models.Permission{}
	for path, ops := range spec.Paths {
		for method, op := range ops {
			if op.Security != nil && len(op.Security) == 0 {
				continue // public
			}
			if op.Permission == "" {
				t.Errorf("%s %s needs a token but names no x-permission", method, path)
				continue
			}
			out[[2]string{strings.ToUpper(method), path}] = models.Permission(op.Permission)
		}
	}
	return out
}

// raw sends a request with a JSON:API body (or none) and returns the
// status and the first error object's code, detail and meta.
func (e *editor) raw(method, path string, body []byte) (int, string, string, map[string]any) {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.s.URL+path, r)
	req.Header.Set("Accept", "application/vnd.api+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.s.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Errors []struct {
			Code, Detail string
			Meta         map[string]any
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &doc)
	if len(doc.Errors) == 0 {
		return resp.StatusCode, "", "", nil
	}
	return resp.StatusCode, doc.Errors[0].Code, doc.Errors[0].Detail, doc.Errors[0].Meta
}

// TestRoleTableOnEveryRoute: a viewer, an author, an editor and an admin
// each try every registered route (from the route table, through
// /openapi.json), on records that do not exist and with empty bodies, so
// nothing changes: a role without the route's permission gets 403
// forbidden naming it; a role with it gets anything but 403 (and no 5xx).
func TestRoleTableOnEveryRoute(t *testing.T) {
	t.Parallel()
	s := start(t)
	routes := s.routePermissions(t)
	if len(routes) < 50 {
		t.Fatalf("only %d routes with a permission in /openapi.json", len(routes))
	}
	keys := make([][2]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][1]+keys[i][0] < keys[j][1]+keys[j][0] })
	for _, role := range models.Roles {
		m := s.member(t, "role-"+string(role)+"@demo.test", role, "")
		for _, k := range keys {
			method, path, perm := k[0], k[1], routes[k]
			url := strings.ReplaceAll(path, "{id}", uuid.NewString())
			var body []byte
			if method == http.MethodPost || method == http.MethodPatch {
				body = []byte(`{}`)
			}
			status, code, detail, meta := m.raw(method, url, body)
			if role.Can(perm) {
				if status == http.StatusForbidden || status >= 500 {
					t.Errorf("%s: %s %s (needs %s) = %d %s %q, want it served", role, method, path, perm, status, code, detail)
				}
				continue
			}
			if status != http.StatusForbidden || code != "forbidden" || !strings.Contains(detail, `"`+string(perm)+`"`) || meta["permission"] != string(perm) {
				t.Errorf("%s: %s %s (needs %s) = %d %s %q %v, want 403 forbidden naming %s", role, method, path, perm, status, code, detail, meta, perm)
			}
		}
	}
}

// TestRoleAuthorMayDraftNotPublish: an author drafts a page and plans its
// publish (may-publish false), but POST /revisions is 403 naming publish
// and changes nothing; an editor's plan of the same draft may publish.
func TestRoleAuthorMayDraftNotPublish(t *testing.T) {
	t.Parallel()
	s := start(t)
	author := s.member(t, "author@demo.test", models.RoleAuthor, "")
	ed := s.member(t, "ed@demo.test", models.RoleEditor, "")
	page, draft := author.page("Draft by an author", "authored", "")

	d := author.publish(draft)
	if d.Status != http.StatusForbidden || len(d.Errors) == 0 || d.Errors[0].Code != "forbidden" || !strings.Contains(d.Errors[0].Detail, `"publish"`) {
		t.Fatalf("author's POST /revisions = %d %s, want 403 forbidden naming publish", d.Status, d.Raw)
	}
	if n := len(resources(t, author.do(http.MethodGet, "/revisions", nil))); n != 0 {
		t.Errorf("%d revisions after a refused publish, want 0", n)
	}
	if st := author.status("/drafts/" + draft); st != 200 {
		t.Errorf("the draft after a refused publish: GET = %d, want 200", st)
	}
	if live := author.do(http.MethodGet, "/pages/"+page, nil); live.Status == 200 {
		if r := live.resource(t); r.Attributes["published-at"] != nil {
			t.Errorf("the page went live: %s", live.Raw)
		}
	}
	plan := func(e *editor) []any {
		d := e.do(http.MethodPost, "/publish-plans", map[string]any{"data": map[string]any{"type": "publish-plans",
			"relationships": map[string]any{"drafts": map[string]any{"data": []any{map[string]any{"type": "drafts", "id": draft}}}}}})
		if d.Status != 200 {
			t.Fatalf("POST /publish-plans = %d %s", d.Status, d.Raw)
		}
		steps, _ := d.resource(t).Attributes["steps"].([]any)
		return steps
	}
	for _, st := range plan(author) {
		if st.(map[string]any)["may-publish"] != false {
			t.Errorf("author's plan step %v: want may-publish false", st)
		}
	}
	for _, st := range plan(ed) {
		if st.(map[string]any)["may-publish"] != true {
			t.Errorf("editor's plan step %v: want may-publish true", st)
		}
	}
	// Reverting another's draft needs revert-any; the editor may.
	other, _ := ed.page("Editor's page", "editors", "")
	otherDraft := draftOf(t, ed.do(http.MethodGet, "/pages/"+other+"?include=draft", nil).resource(t))
	if d := author.do(http.MethodDelete, "/drafts/"+otherDraft, nil); d.Status != http.StatusForbidden || !strings.Contains(d.Errors[0].Detail, `"revert-any"`) {
		t.Errorf("author reverts an editor's draft = %d %s, want 403 naming revert-any", d.Status, d.Raw)
	}
	if d := ed.do(http.MethodDelete, "/drafts/"+draft, nil); d.Status != http.StatusNoContent {
		t.Errorf("editor reverts an author's draft = %d %s, want 204", d.Status, d.Raw)
	}
	ed.mustPublish(otherDraft)
}

// TestRoleSectionPublishChecksTheClosure: an editor of /blog/posts/ drafts
// a post under a new section page whose new parent (/blog) lies outside
// the section; publishing the post pulls /blog in and is refused, naming
// its draft, and changes nothing. Writes outside the section are 403;
// once an admin has published the parents, the post publishes.
func TestRoleSectionPublishChecksTheClosure(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test") // the seeded user: admin
	blogEditor := s.member(t, "posts@demo.test", models.RoleEditor, "/blog/posts/")

	blog, blogDraft := admin.page("Blog", "blog", "")
	posts, postsDraft := admin.page("Posts", "posts", blog)
	_, postDraft := blogEditor.page("First post", "first", posts)

	d := blogEditor.publish(postDraft)
	if d.Status != http.StatusForbidden || len(d.Errors) == 0 || d.Errors[0].Code != "forbidden" || !strings.Contains(d.Errors[0].Detail, blogDraft) {
		t.Fatalf("publish pulling in /blog = %d %s, want 403 forbidden naming draft %s", d.Status, d.Raw, blogDraft)
	}
	if n := len(resources(t, admin.do(http.MethodGet, "/revisions", nil))); n != 0 {
		t.Errorf("%d revisions after a refused publish, want 0", n)
	}
	for _, id := range []string{blogDraft, postsDraft, postDraft} {
		if st := admin.status("/drafts/" + id); st != 200 {
			t.Errorf("draft %s after a refused publish: GET = %d, want 200", id, st)
		}
	}
	// A write outside the section: 403; reads stay site-wide.
	if d := blogEditor.do(http.MethodPatch, "/pages/"+blog, map[string]any{"data": map[string]any{"type": "pages", "id": blog,
		"attributes": map[string]any{"title": "Not mine"}}}); d.Status != http.StatusForbidden {
		t.Errorf("section editor PATCHes /blog = %d %s, want 403", d.Status, d.Raw)
	}
	if d := blogEditor.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"title": "Elsewhere", "slug": "elsewhere"}}}); d.Status != http.StatusForbidden {
		t.Errorf("section editor creates /elsewhere = %d %s, want 403", d.Status, d.Raw)
	}
	if st := blogEditor.status("/drafts/" + blogDraft); st != 200 {
		t.Errorf("section editor reads the draft of /blog = %d, want 200", st)
	}
	if d := blogEditor.do(http.MethodDelete, "/drafts/"+blogDraft, nil); d.Status != http.StatusForbidden {
		t.Errorf("section editor reverts the draft of /blog = %d %s, want 403", d.Status, d.Raw)
	}
	admin.mustPublish(blogDraft, postsDraft)
	blogEditor.mustPublish(postDraft)
}

// TestRoleChangeHoldsOnTheNextRequest: a role is read with the token on
// every request: a demoted editor's next publish is 403, a removed
// member's token stops working.
func TestRoleChangeHoldsOnTheNextRequest(t *testing.T) {
	t.Parallel()
	s := start(t)
	m := s.member(t, "demoted@demo.test", models.RoleEditor, "")
	_, draft := m.page("Before", "before", "")
	u, err := models.UserByEmail(context.Background(), s.DB, "demoted@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := models.SetRole(context.Background(), s.DB, s.Site.ID, u.ID, models.RoleViewer, nil); err != nil {
		t.Fatal(err)
	}
	if d := m.publish(draft); d.Status != http.StatusForbidden {
		t.Errorf("demoted editor's publish = %d %s, want 403", d.Status, d.Raw)
	}
	if st := m.status("/pages"); st != 200 {
		t.Errorf("viewer reads /pages = %d, want 200", st)
	}
	if _, err := s.DB.NewDelete().Table("memberships").Where("user_id = ?", u.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := m.status("/pages"); st != http.StatusUnauthorized {
		t.Errorf("removed member reads /pages = %d, want 401", st)
	}
}

// TestMembershipSeveralSites: a user of two sites must name one at sign-in
// (invalid_request naming site); GET /users/me lists both memberships.
func TestMembershipSeveralSites(t *testing.T) {
	t.Parallel()
	s := start(t)
	m := s.member(t, "both@demo.test", models.RoleAuthor, "")
	u, err := models.UserByEmail(context.Background(), s.DB, "both@demo.test")
	if err != nil {
		t.Fatal(err)
	}
	// Signed in while a member of one site: that site.
	if st := m.status("/users/me"); st != 200 {
		t.Fatalf("GET /users/me = %d", st)
	}
	if _, err := models.AddMembership(context.Background(), s.DB, s.Other.ID, u.ID, models.RoleViewer, nil); err != nil {
		t.Fatal(err)
	}
	grant := func(site string) (int, map[string]string) {
		form := url.Values{"grant_type": {"password"}, "username": {"both@demo.test"}, "password": {password}}
		if site != "" {
			form.Set("site", site)
		}
		resp, err := s.http.PostForm(s.URL+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if st, body := grant(""); st != 400 || body["error"] != "invalid_request" || !strings.Contains(body["error_description"], "site") {
		t.Errorf("grant without site = %d %v, want 400 invalid_request naming site", st, body)
	}
	if st, body := grant("nosuch"); st != 400 || body["error"] != "invalid_grant" {
		t.Errorf("grant for a site not theirs = %d %v, want 400 invalid_grant", st, body)
	}
	st, body := grant("other")
	if st != 200 {
		t.Fatalf("grant with site=other = %d %v", st, body)
	}
	other := &editor{t: t, s: s, token: body["access_token"]}
	site := other.do(http.MethodGet, "/site", nil).resource(t)
	if site.ID != s.Other.ID.String() {
		t.Errorf("token for site=other reads site %s", site.ID)
	}
	if st := other.status("/webhooks"); st != http.StatusForbidden {
		t.Errorf("viewer of other GET /webhooks = %d, want 403", st)
	}
	me := other.do(http.MethodGet, "/users/me", nil)
	var meta struct {
		Meta struct {
			Memberships []struct {
				SiteID string `json:"site-id"`
				Slug   string `json:"subdomain-slug"`
				Role   string `json:"role"`
			}
		}
	}
	if err := json.Unmarshal(me.Raw, &meta); err != nil || len(meta.Meta.Memberships) != 2 {
		t.Fatalf("GET /users/me meta = %s, want two memberships", me.Raw)
	}
	got := map[string]string{}
	for _, ms := range meta.Meta.Memberships {
		got[ms.Slug] = ms.Role
	}
	if got["demo"] != "author" || got["other"] != "viewer" {
		t.Errorf("memberships = %v, want demo author and other viewer", got)
	}
}

// TestRoleSectionScheduleChecksTheClosure: an editor limited to a section
// may not move or cancel a scheduled revision that touches records outside
// it (403, and the revision stays as it was), but moves and cancels one of
// the section's.
func TestRoleSectionScheduleChecksTheClosure(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	blogEditor := s.member(t, "scheduler@demo.test", models.RoleEditor, "/blog/")
	blog, blogDraft := admin.page("Blog", "blog", "")
	admin.mustPublish(blogDraft)
	_, aboutDraft := admin.page("About", "about", "")
	at := time.Now().Add(time.Hour)
	d := admin.schedule(at, aboutDraft)
	if d.Status != 201 {
		t.Fatalf("schedule /about = %d %s", d.Status, d.Raw)
	}
	outside := d.resource(t).ID
	if d := blogEditor.do(http.MethodPatch, "/revisions/"+outside, moveBody(outside, at.Add(time.Hour).UTC().Format(time.RFC3339))); d.Status != http.StatusForbidden ||
		!strings.Contains(d.Errors[0].Detail, aboutDraft) {
		t.Errorf("section editor moves the revision of /about = %d %s, want 403 naming draft %s", d.Status, d.Raw, aboutDraft)
	}
	if d := blogEditor.do(http.MethodDelete, "/revisions/"+outside, nil); d.Status != http.StatusForbidden {
		t.Errorf("section editor cancels the revision of /about = %d %s, want 403", d.Status, d.Raw)
	}
	r := admin.do(http.MethodGet, "/revisions/"+outside, nil).resource(t)
	if r.Attributes["status"] != "scheduled" || r.Attributes["publish-at"] != at.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("after the refusals the revision is %v at %v, want scheduled at %s", r.Attributes["status"], r.Attributes["publish-at"], at.UTC())
	}
	_, postDraft := blogEditor.page("Post", "post", blog)
	d = blogEditor.schedule(at, postDraft)
	if d.Status != 201 {
		t.Fatalf("section editor schedules /blog/post = %d %s", d.Status, d.Raw)
	}
	inside := d.resource(t).ID
	if d := blogEditor.do(http.MethodPatch, "/revisions/"+inside, moveBody(inside, at.Add(time.Hour).UTC().Format(time.RFC3339))); d.Status != 200 {
		t.Errorf("section editor moves the revision of /blog/post = %d %s, want 200", d.Status, d.Raw)
	}
	if d := blogEditor.do(http.MethodDelete, "/revisions/"+inside, nil); d.Status != http.StatusNoContent {
		t.Errorf("section editor cancels the revision of /blog/post = %d %s, want 204", d.Status, d.Raw)
	}
	if d := admin.do(http.MethodDelete, "/revisions/"+outside, nil); d.Status != http.StatusNoContent {
		t.Errorf("the admin cancels the revision of /about = %d %s, want 204", d.Status, d.Raw)
	}
}
