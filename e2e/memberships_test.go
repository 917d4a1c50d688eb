package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pressroom/pressroom/models"
)

// Managing the team (issue 28 section 3, docs/auth.md "Managing the
// team"): admins add, change and remove the site's members.

// grant signs email in to the site slug with the password grant and
// returns the answer's status and tokens.
func (s *system) grant(t *testing.T, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := s.http.PostForm(s.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	return resp.StatusCode, tok.AccessToken, tok.RefreshToken
}

func (s *system) signIn(t *testing.T, email, pw, slug string) (int, string, string) {
	t.Helper()
	return s.grant(t, url.Values{"grant_type": {"password"}, "username": {email}, "password": {pw}, "site": {slug}})
}

func membershipBody(email, role string) map[string]any {
	return map[string]any{"data": map[string]any{"type": "memberships", "attributes": map[string]any{"email": email, "role": role}}}
}

func rolePatch(id, role string) map[string]any {
	return map[string]any{"data": map[string]any{"type": "memberships", "id": id, "attributes": map[string]any{"role": role}}}
}

// membershipOf is the id of email's membership, read by admin.
func (e *editor) membershipOf(email string) string {
	e.t.Helper()
	d := e.do("GET", "/memberships?page[size]=100", nil)
	var list []resource
	if err := json.Unmarshal(d.Data, &list); err != nil {
		e.t.Fatal(err)
	}
	for _, r := range list {
		if r.Attributes["email"] == email {
			return r.ID
		}
	}
	e.t.Fatalf("no membership of %s in %s", email, d.Raw)
	return ""
}

// setupURL is the meta.password-setup-url of a create's answer ("" if none).
func setupURL(t *testing.T, d *doc) string {
	t.Helper()
	var top struct {
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(d.Raw, &top); err != nil {
		t.Fatal(err)
	}
	u, _ := top.Meta["password-setup-url"].(string)
	return u
}

// page is an HTML request of a browser with a cookie jar.
func page(t *testing.T, c *http.Client, method, u string, form url.Values) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	if method == "GET" {
		resp, err = c.Get(u)
	} else {
		resp, err = c.PostForm(u, form)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var hiddenField = regexp.MustCompile(`name="(token|csrf)" value="([^"]+)"`)

// TestMembershipCreateExistingAndNewUser: an admin adds a user of another
// site by e-mail (no setup link), then a new user, whose 201 carries the
// password setup link once; the link's form sets the password once, needs
// its CSRF token, and is gone after use or expiry. The same e-mail twice
// is 409.
func TestMembershipCreateExistingAndNewUser(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")

	d := admin.do("POST", "/memberships?include=user", membershipBody("EDITOR@other.test", "author"))
	if d.Status != http.StatusCreated || setupURL(t, d) != "" {
		t.Fatalf("add existing user = %d %s", d.Status, d.Raw)
	}
	r := d.resource(t)
	if r.Attributes["email"] != "editor@other.test" || r.Attributes["role"] != "author" || len(r.Relationships["user"].Data) == 0 || len(r.Relationships["site"].Data) == 0 {
		t.Fatalf("membership = %s", d.Raw)
	}
	var inc struct{ Included []resource }
	if err := json.Unmarshal(d.Raw, &inc); err != nil || len(inc.Included) != 1 || inc.Included[0].Type != "users" || inc.Included[0].Attributes["email"] != "editor@other.test" {
		t.Errorf("include=user of a user of another site: %s", d.Raw)
	}
	if got := admin.do("GET", "/memberships/"+r.ID+"/site", nil); got.Status != 200 || !strings.Contains(string(got.Data), s.Site.ID.String()) {
		t.Errorf("GET site of membership = %d %s", got.Status, got.Raw)
	}
	if st, tok, _ := s.signIn(t, "editor@other.test", password, "demo"); st != 200 || tok == "" {
		t.Fatalf("the added user signs in to demo: %d", st)
	}
	if d := admin.do("POST", "/memberships", membershipBody("editor@other.test", "viewer")); d.Status != http.StatusConflict || d.Errors[0].Code != "already_member" {
		t.Fatalf("same email twice = %d %s", d.Status, d.Raw)
	}

	d = admin.do("POST", "/memberships", membershipBody("newbie@demo.test", "viewer"))
	link := setupURL(t, d)
	if d.Status != http.StatusCreated || !strings.HasPrefix(link, s.URL+"/password-setup?token=") {
		t.Fatalf("add new user = %d %s", d.Status, d.Raw)
	}
	if st, _, _ := s.signIn(t, "newbie@demo.test", password, "demo"); st == 200 {
		t.Fatal("a new user signs in before setting a password")
	}
	if got := admin.do("GET", "/memberships/"+d.resource(t).ID, nil); strings.Contains(string(got.Raw), "password-setup") {
		t.Errorf("the setup link is shown again: %s", got.Raw)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	st, body := page(t, browser, "GET", link, nil)
	fields := map[string]string{}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		fields[m[1]] = m[2]
	}
	if st != 200 || !strings.Contains(body, `name="password"`) || fields["csrf"] == "" || fields["token"] == "" {
		t.Fatalf("setup form = %d %s", st, body)
	}
	form := url.Values{"token": {fields["token"]}, "csrf": {fields["csrf"]}, "password": {password}}
	if st, _ := page(t, &http.Client{}, "POST", s.URL+"/password-setup", form); st != http.StatusForbidden {
		t.Errorf("POST without the form's cookie = %d, want 403", st)
	}
	if st, _ := page(t, browser, "POST", s.URL+"/password-setup", url.Values{"token": form["token"], "csrf": form["csrf"], "password": {"short"}}); st != http.StatusUnprocessableEntity {
		t.Errorf("short password = %d, want 422", st)
	}
	if st, body := page(t, browser, "POST", s.URL+"/password-setup", form); st != 200 {
		t.Fatalf("set password = %d %s", st, body)
	}
	if st, tok, _ := s.signIn(t, "newbie@demo.test", password, "demo"); st != 200 || tok == "" {
		t.Fatalf("the new user signs in with the password set: %d", st)
	}
	if st, _ := page(t, browser, "GET", link, nil); st != http.StatusGone {
		t.Errorf("used link GET = %d, want 410", st)
	}
	if st, _ := page(t, browser, "POST", s.URL+"/password-setup", form); st != http.StatusGone {
		t.Errorf("used link POST = %d, want 410", st)
	}

	// A link past its 72 hours is gone too.
	d = admin.do("POST", "/memberships", membershipBody("late@demo.test", "author"))
	if d.Status != http.StatusCreated {
		t.Fatalf("add = %d %s", d.Status, d.Raw)
	}
	if _, err := s.DB.ExecContext(context.Background(), "UPDATE password_setups SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if st, _ := page(t, browser, "GET", setupURL(t, d), nil); st != http.StatusGone {
		t.Errorf("expired link = %d, want 410", st)
	}
	var stored int
	if err := s.DB.NewRaw("SELECT count(*) FROM password_setups WHERE token_hash = ?", strings.TrimPrefix(setupURL(t, d), s.URL+"/password-setup?token=")).Scan(context.Background(), &stored); err != nil || stored != 0 {
		t.Errorf("the token itself is stored: %d %v", stored, err)
	}
}

// TestMembershipRoleChangeTakesEffectOnNextRequest: a member's token runs
// with the role the admin sets, from the next request; a removed member's
// access and refresh tokens for the site stop working.
func TestMembershipRoleChangeTakesEffectOnNextRequest(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	member := s.member(t, "team@demo.test", models.RoleViewer, "")
	id := admin.membershipOf("team@demo.test")
	if st, code, _, _ := member.raw("GET", "/memberships", nil); st != http.StatusForbidden || code != "forbidden" {
		t.Fatalf("viewer GET /memberships = %d %s", st, code)
	}
	if d := admin.do("PATCH", "/memberships/"+id, rolePatch(id, "admin")); d.Status != 200 || d.resource(t).Attributes["role"] != "admin" {
		t.Fatalf("PATCH role = %d %s", d.Status, d.Raw)
	}
	if st, _, _, _ := member.raw("GET", "/memberships", nil); st != http.StatusOK {
		t.Fatalf("promoted member's next request = %d, want 200", st)
	}
	if d := admin.do("PATCH", "/memberships/"+id, rolePatch(id, "viewer")); d.Status != 200 {
		t.Fatalf("PATCH role = %d %s", d.Status, d.Raw)
	}
	if st, code, _, _ := member.raw("GET", "/memberships", nil); st != http.StatusForbidden || code != "forbidden" {
		t.Fatalf("demoted member's next request = %d %s, want 403", st, code)
	}
	section := map[string]any{"data": map[string]any{"type": "memberships", "id": id, "attributes": map[string]any{"path-prefix": "/blog/"}}}
	if d := admin.do("PATCH", "/memberships/"+id, section); d.Status != 200 || d.resource(t).Attributes["path-prefix"] != "/blog/" || d.resource(t).Attributes["role"] != "viewer" {
		t.Errorf("PATCH path-prefix = %d %s", d.Status, d.Raw)
	}
	section["data"].(map[string]any)["attributes"] = map[string]any{"path-prefix": "blog"}
	if d := admin.do("PATCH", "/memberships/"+id, section); d.Status != http.StatusUnprocessableEntity || d.Errors[0].Code != "invalid_path_prefix" {
		t.Errorf("PATCH path-prefix blog = %d %s", d.Status, d.Raw)
	}
	bad := map[string]any{"data": map[string]any{"type": "memberships", "id": id, "attributes": map[string]any{"email": "x@demo.test"}}}
	if d := admin.do("PATCH", "/memberships/"+id, bad); d.Status != http.StatusUnprocessableEntity || d.Errors[0].Code != "read_only" {
		t.Errorf("PATCH email = %d %s", d.Status, d.Raw)
	}

	st, access, refresh := s.signIn(t, "team@demo.test", password, "demo")
	if st != 200 || refresh == "" {
		t.Fatalf("sign in = %d", st)
	}
	if st, access, refresh = s.grant(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st != 200 || refresh == "" {
		t.Fatalf("refresh before the removal = %d", st)
	}
	if d := admin.do("DELETE", "/memberships/"+id, nil); d.Status != http.StatusNoContent {
		t.Fatalf("DELETE = %d %s", d.Status, d.Raw)
	}
	gone := &editor{t: t, s: s, token: access}
	if st, _, _, _ := gone.raw("GET", "/pages", nil); st != http.StatusUnauthorized {
		t.Errorf("removed member's next request = %d, want 401", st)
	}
	if st, _, _ := s.grant(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); st == 200 {
		t.Error("removed member's refresh token still works")
	}
	if d := admin.do("GET", "/memberships/"+id, nil); d.Status != http.StatusNotFound {
		t.Errorf("GET removed membership = %d", d.Status)
	}
}

// TestMembershipLastAdmin: the site's last admin can be neither demoted
// nor removed (409 last_admin), not even by SQL past the API; two admins
// demoting each other at once leave one admin.
func TestMembershipLastAdmin(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	own := admin.membershipOf("editor@demo.test")
	if d := admin.do("PATCH", "/memberships/"+own, rolePatch(own, "editor")); d.Status != http.StatusConflict || d.Errors[0].Code != "last_admin" {
		t.Fatalf("demote last admin = %d %s", d.Status, d.Raw)
	}
	if d := admin.do("DELETE", "/memberships/"+own, nil); d.Status != http.StatusConflict || d.Errors[0].Code != "last_admin" {
		t.Fatalf("remove last admin = %d %s", d.Status, d.Raw)
	}
	if _, err := s.DB.ExecContext(context.Background(), "UPDATE memberships SET role = 'editor' WHERE id = ?", own); err == nil {
		t.Fatal("the database let the last admin be demoted")
	}
	second := s.member(t, "second@demo.test", models.RoleAdmin, "")
	other := admin.membershipOf("second@demo.test")
	// Each demotes the other at once: one wins, one is refused.
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, who := range []*editor{admin, second} {
		target := other
		if i == 1 {
			target = own
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _, _ = who.raw("PATCH", "/memberships/"+target, []byte(`{"data":{"type":"memberships","id":"`+target+`","attributes":{"role":"editor"}}}`))
		}()
	}
	wg.Wait()
	var admins int
	if err := s.DB.NewRaw("SELECT count(*) FROM memberships WHERE site_id = ? AND role = 'admin'", s.Site.ID).Scan(context.Background(), &admins); err != nil {
		t.Fatal(err)
	}
	if admins != 1 || codes[0]+codes[1] != http.StatusOK+http.StatusConflict && codes[0]+codes[1] != http.StatusForbidden+http.StatusOK {
		t.Fatalf("concurrent demotions = %v, %d admins left", codes, admins)
	}
}

// TestMembershipAdminsOnlyAndSiteScoped: an editor gets 403 on every
// membership route; another site's admin gets 404 for this site's
// memberships.
func TestMembershipAdminsOnlyAndSiteScoped(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	ed := s.member(t, "ed@demo.test", models.RoleEditor, "")
	id := admin.membershipOf("ed@demo.test")
	for _, c := range []struct {
		method, path string
		body         []byte
	}{
		{"GET", "/memberships", nil},
		{"GET", "/memberships/" + id, nil},
		{"POST", "/memberships", []byte(`{"data":{"type":"memberships","attributes":{"email":"x@demo.test","role":"admin"}}}`)},
		{"PATCH", "/memberships/" + id, []byte(`{"data":{"type":"memberships","id":"` + id + `","attributes":{"role":"admin"}}}`)},
		{"DELETE", "/memberships/" + id, nil},
	} {
		if st, code, detail, _ := ed.raw(c.method, c.path, c.body); st != http.StatusForbidden || code != "forbidden" || !strings.Contains(detail, "memberships") {
			t.Errorf("editor %s %s = %d %s %q, want 403", c.method, c.path, st, code, detail)
		}
	}
	if d := admin.do("GET", "/memberships?filter[role]=editor&sort=-created-at", nil); d.Status != 200 || strings.Count(string(d.Data), `"type":"memberships"`) != 1 || !strings.Contains(string(d.Data), "ed@demo.test") {
		t.Errorf("filter[role]=editor = %d %s", d.Status, d.Raw)
	}
	foreign := s.editor(t, "editor@other.test")
	for _, c := range []struct{ method, path string }{
		{"GET", "/memberships/" + id}, {"GET", "/memberships/" + id + "/user"}, {"DELETE", "/memberships/" + id},
	} {
		if d := foreign.do(c.method, c.path, nil); d.Status != http.StatusNotFound {
			t.Errorf("other site's admin %s %s = %d %s, want 404", c.method, c.path, d.Status, d.Raw)
		}
	}
	if d := foreign.do("PATCH", "/memberships/"+id, rolePatch(id, "viewer")); d.Status != http.StatusNotFound {
		t.Errorf("other site's admin PATCH = %d %s, want 404", d.Status, d.Raw)
	}
	d := foreign.do("GET", "/memberships", nil)
	if strings.Contains(string(d.Raw), "ed@demo.test") {
		t.Errorf("other site lists this site's member: %s", d.Raw)
	}
	if d := admin.do("GET", "/memberships/"+id, nil); d.Status != 200 || d.resource(t).Attributes["role"] != "editor" {
		t.Errorf("membership changed: %s", d.Raw)
	}
}
