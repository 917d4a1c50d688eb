package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/workflows"
)

// The audit trail (issue 28 section 5, docs/audit.md).

// auditEvent is one audit-events resource, as a test reads it.
type auditEvent struct {
	ID, Action, ItemType, ItemID, RequestID, ClientAddress, User string
	Changed                                                      []string
	// Client is the oauth-client relationship's id, ClientID its
	// meta.client-id; ClientNull tells its data is null.
	Client, ClientID string
	ClientNull       bool
}

// auditEvents reads one page of GET /audit-events?query as admin token,
// and its links.next.
func (s *system) auditEvents(t *testing.T, token, query string) ([]auditEvent, string) {
	t.Helper()
	d := s.call(t, token, http.MethodGet, "/audit-events"+query, nil)
	if d.Status != 200 {
		t.Fatalf("GET /audit-events%s = %d %s", query, d.Status, d.Raw)
	}
	var links struct {
		Links struct{ Next string }
	}
	_ = json.Unmarshal(d.Raw, &links)
	var metas []struct {
		Relationships struct {
			OAuthClient struct {
				Meta struct {
					ClientID string `json:"client-id"`
				}
			} `json:"oauth-client"`
		}
	}
	_ = json.Unmarshal(d.Data, &metas)
	var out []auditEvent
	for i, r := range resources(t, d) {
		e := auditEvent{ID: r.ID, Action: str(r.Attributes["action"]), ItemType: str(r.Attributes["item-type"]),
			ItemID: str(r.Attributes["item-id"]), RequestID: str(r.Attributes["request-id"]), ClientAddress: str(r.Attributes["client-address"])}
		for _, c := range r.Attributes["changed"].([]any) {
			e.Changed = append(e.Changed, c.(string))
		}
		var user struct{ ID string }
		_ = json.Unmarshal(r.Relationships["user"].Data, &user)
		e.User = user.ID
		rel, ok := r.Relationships["oauth-client"]
		if !ok || len(rel.Data) == 0 {
			t.Fatalf("an audit event without the oauth-client relationship's data: %s", d.Raw)
		}
		var client struct{ ID string }
		_ = json.Unmarshal(rel.Data, &client)
		e.Client, e.ClientNull = client.ID, string(rel.Data) == "null"
		e.ClientID = metas[i].Relationships.OAuthClient.Meta.ClientID
		out = append(out, e)
	}
	return out, strings.TrimPrefix(links.Links.Next, s.URL)
}

func str(v any) string { s, _ := v.(string); return s }

// TestAuditTrail: a sign-in, a failed sign-in, a page's create, update and
// delete and a publish each appear, newest first, with the actor, the
// action, the record and the names of the attributes sent; a write refused
// with 422 records nothing; the filters and the cursor pages answer; a
// non-admin gets 403.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test") // auth.sign-in
	me := admin.do(http.MethodGet, "/users/me", nil).resource(t).ID
	resp, err := s.http.PostForm(s.URL+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("wrong password: %d, want 400", resp.StatusCode)
	}

	page, draft := admin.page("Audited", "audited", "")
	if d := s.callWith(t, admin.token, http.MethodPatch, "/pages/"+page, map[string]any{"data": map[string]any{"type": "pages", "id": page,
		"attributes": map[string]any{"title": "Audited again"}}}, "X-Request-Id", "audit-test-patch"); d.Status != 200 {
		t.Fatalf("PATCH /pages = %d %s", d.Status, d.Raw)
	}
	before, _ := s.auditEvents(t, admin.token, "")
	if d := admin.do(http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
		"attributes": map[string]any{"slug": "no-title"}}}); d.Status != http.StatusUnprocessableEntity {
		t.Fatalf("POST /pages without a title = %d %s, want 422", d.Status, d.Raw)
	}
	if after, _ := s.auditEvents(t, admin.token, ""); len(after) != len(before) {
		t.Errorf("a 422 write recorded an event: %d events before, %d after", len(before), len(after))
	}
	// Published first (the draft is the page's create), then deleted: a
	// delete draft of a live page.
	rev := admin.mustPublish(draft).ID
	_, draft = admin.page("Second", "second", "")
	if d := admin.do(http.MethodDelete, "/drafts/"+draft, nil); d.Status != http.StatusNoContent {
		t.Fatalf("DELETE /drafts = %d %s", d.Status, d.Raw)
	}
	if d := admin.do(http.MethodDelete, "/pages/"+page, nil); d.Status != 200 {
		t.Fatalf("DELETE /pages = %d %s", d.Status, d.Raw)
	}

	all, next := s.auditEvents(t, admin.token, "?page[size]=100")
	if next != "" {
		t.Errorf("one page of %d events has links.next %s", len(all), next)
	}
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	want := []string{"pages.delete", "drafts.delete", "pages.create", "revisions.create", "pages.update", "pages.create", "auth.sign-in-failed", "auth.sign-in"}
	if !slices.Equal(actions, want) {
		t.Fatalf("actions, newest first: %v, want %v", actions, want)
	}
	check := func(e auditEvent, itemType, itemID string, changed ...string) {
		t.Helper()
		if e.ItemType != itemType || e.ItemID != itemID || e.User != me || e.ClientAddress != "127.0.0.1" || e.RequestID == "" {
			t.Errorf("%s: item %s:%s user %s address %q request %q, want %s:%s by %s from 127.0.0.1", e.Action, e.ItemType, e.ItemID,
				e.User, e.ClientAddress, e.RequestID, itemType, itemID, me)
		}
		slices.Sort(e.Changed)
		if !slices.Equal(e.Changed, changed) && !(len(changed) == 0 && len(e.Changed) == 0) {
			t.Errorf("%s: changed %v, want %v", e.Action, e.Changed, changed)
		}
	}
	check(all[0], "pages", page)
	check(all[1], "drafts", draft)
	check(all[3], "revisions", rev, "comments", "drafts")
	check(all[4], "pages", page, "title")
	check(all[5], "pages", page, "slug", "title")
	check(all[6], "users", me)
	check(all[7], "users", me)
	if all[4].RequestID != "audit-test-patch" {
		t.Errorf("the PATCH's request-id %q, want the X-Request-Id sent", all[4].RequestID)
	}

	// Filters.
	for query, want := range map[string]int{
		"?filter[action]=pages.update":                  1,
		"?filter[item]=pages:" + page:                   3,
		"?filter[item]=revisions:" + rev:                1,
		"?filter[user]=" + me:                           len(all),
		"?filter[user]=" + uuid.NewString():             0,
		"?filter[created-at][gte]=2100-01-01T00:00:00Z": 0,
		"?filter[created-at][lt]=2100-01-01T00:00:00Z":  len(all),
	} {
		if got, _ := s.auditEvents(t, admin.token, query); len(got) != want {
			t.Errorf("GET /audit-events%s: %d events, want %d", query, len(got), want)
		}
	}
	if d := admin.do(http.MethodGet, "/audit-events?page[after]=nonsense", nil); d.Status != 400 {
		t.Errorf("a malformed cursor: %d %s, want 400", d.Status, d.Raw)
	}
	// Cursor pages of 3: the same events, in the same order, each once.
	var paged []auditEvent
	for q, n := "/audit-events?page[size]=3", 0; q != ""; n++ {
		if n > len(all) {
			t.Fatal("the cursor pages do not end")
		}
		var got []auditEvent
		got, q = s.auditEvents(t, admin.token, strings.TrimPrefix(q, "/audit-events"))
		if len(got) > 3 {
			t.Fatalf("a page of %d, want at most 3", len(got))
		}
		paged = append(paged, got...)
	}
	if len(paged) != len(all) {
		t.Fatalf("paged %d events, want %d", len(paged), len(all))
	}
	for i := range all {
		if paged[i].ID != all[i].ID {
			t.Errorf("paged event %d is %s, want %s", i, paged[i].ID, all[i].ID)
		}
	}
	if d := admin.do(http.MethodGet, "/audit-events/"+all[0].ID, nil); d.Status != 200 {
		t.Errorf("GET /audit-events/:id = %d %s", d.Status, d.Raw)
	}

	// Admins only.
	ed := s.member(t, "ed@demo.test", models.RoleEditor, "")
	if d := ed.do(http.MethodGet, "/audit-events", nil); d.Status != http.StatusForbidden {
		t.Errorf("an editor's GET /audit-events = %d %s, want 403", d.Status, d.Raw)
	}
	// Another site's admin sees none of these.
	other := s.editor(t, "editor@other.test")
	for _, e := range func() []auditEvent { got, _ := s.auditEvents(t, other.token, ""); return got }() {
		if e.User == me {
			t.Errorf("the other site's trail shows %s by %s", e.Action, me)
		}
	}
}

// TestAuditPruneSchedule: the schedule every worker creates runs
// PruneAuditEvents, which deletes the events older than the retention
// and keeps the younger ones.
func TestAuditPruneSchedule(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	s.editor(t, "editor@demo.test") // a sign-in: a young event, which stays
	old := time.Now().Add(-s.Config.AuditRetention - time.Hour)
	for range 3 {
		if _, err := s.DB.NewRaw(`INSERT INTO audit_events (id, site_id, action, item_type, created_at) VALUES (?, ?, 'pages.update', 'pages', ?)`,
			uuid.New(), s.Site.ID, old).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var got workflows.PrunedAuditEvents
	run := s.runScheduleNow(t, workflows.AuditPruneScheduleID+"-"+s.Config.TaskQueue, time.Hour, &got, "prune-audit-events.history.json")
	if got.Events != 3 {
		t.Errorf("prune run %s deleted %+v, want 3 events", run, got)
	}
	var left []string
	if err := s.DB.NewRaw("SELECT action FROM audit_events").Scan(ctx, &left); err != nil || !slices.Equal(left, []string{"auth.sign-in"}) {
		t.Errorf("left after the prune: %v (%v), want the sign-in", left, err)
	}
}

// TestAuditRefresh: a refresh grant records auth.refresh for the person
// whose token it renews; a refresh that fails records nothing.
func TestAuditRefresh(t *testing.T) {
	t.Parallel()
	s := start(t)
	grant := func(form url.Values) (int, map[string]any) {
		t.Helper()
		resp, err := s.http.PostForm(s.URL+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	st, tok := grant(url.Values{"grant_type": {"password"}, "username": {"editor@demo.test"}, "password": {password}})
	if st != 200 {
		t.Fatalf("password grant: %d %v", st, tok)
	}
	if st, out := grant(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"not-a-token"}}); st != 400 {
		t.Fatalf("a bad refresh token: %d %v, want 400", st, out)
	}
	st, renewed := grant(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}})
	if st != 200 {
		t.Fatalf("refresh grant: %d %v", st, renewed)
	}
	token := renewed["access_token"].(string)
	me := s.call(t, token, http.MethodGet, "/users/me", nil).resource(t).ID
	events, _ := s.auditEvents(t, token, "")
	var actions []string
	for _, e := range events {
		actions = append(actions, e.Action)
		if e.User != me || e.ItemType != "users" || e.ItemID != me {
			t.Errorf("%s: user %s item %s:%s, want %s", e.Action, e.User, e.ItemType, e.ItemID, me)
		}
	}
	if !slices.Equal(actions, []string{"auth.refresh", "auth.sign-in"}) {
		t.Errorf("actions %v, want [auth.refresh auth.sign-in]", actions)
	}
}

// TestAuditNamesTheClient: an integration client's grant
// (auth.client-credentials), a refused grant of it
// (auth.client-credentials-failed) and its write each name the client in
// the oauth-client relationship, with user null; a person's event has the
// relationship's data null; filter[oauth-client] takes the client's
// resource id or its client-id.
func TestAuditNamesTheClient(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	id, clientID, secret := admin.createClient("Importer", models.RoleAuthor, 0)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), "wrong")
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong client secret: %d, want 401", resp.StatusCode)
	}
	bot := &editor{t: t, s: s, token: s.clientToken(t, clientID, secret)}
	page, _ := bot.page("By the bot", "by-the-bot", "")

	events, _ := s.auditEvents(t, admin.token, "?filter[oauth-client]="+id)
	var actions []string
	for _, e := range events {
		actions = append(actions, e.Action)
		if e.Client != id || e.ClientID != clientID || e.User != "" {
			t.Errorf("%s: oauth-client %q (client-id %q), user %q; want %s (%s) and no user", e.Action, e.Client, e.ClientID, e.User, id, clientID)
		}
	}
	want := []string{"pages.create", "auth.client-credentials", "auth.client-credentials-failed"}
	if !slices.Equal(actions, want) {
		t.Fatalf("the client's events %v, want %v", actions, want)
	}
	if events[0].ItemID != page || events[1].ItemType != "oauth-clients" || events[1].ItemID != id {
		t.Errorf("items: %s:%s, %s:%s; want pages:%s, oauth-clients:%s", events[0].ItemType, events[0].ItemID, events[1].ItemType, events[1].ItemID, page, id)
	}
	if byClientID, _ := s.auditEvents(t, admin.token, "?filter[oauth-client]="+url.QueryEscape(clientID)); len(byClientID) != len(events) {
		t.Errorf("filter[oauth-client]=<client-id>: %d events, want %d", len(byClientID), len(events))
	}
	if none, _ := s.auditEvents(t, admin.token, "?filter[oauth-client]="+uuid.NewString()); len(none) != 0 {
		t.Errorf("filter[oauth-client] of no client: %d events", len(none))
	}
	mine, _ := s.auditEvents(t, admin.token, "?filter[action]=oauth-clients.create")
	if len(mine) != 1 || !mine[0].ClientNull || mine[0].User == "" || mine[0].ClientID != "" {
		t.Errorf("a person's event: %+v, want oauth-client data null and a user", mine)
	}
	if d := admin.do(http.MethodGet, "/audit-events/"+events[0].ID+"/oauth-client", nil); d.Status != 200 || d.resource(t).ID != id {
		t.Errorf("GET /audit-events/:id/oauth-client = %d %s, want the client", d.Status, d.Raw)
	}
	// A deleted client is still named by its client-id.
	if d := admin.do(http.MethodDelete, "/oauth-clients/"+id, nil); d.Status != 204 {
		t.Fatalf("DELETE /oauth-clients = %d %s", d.Status, d.Raw)
	}
	gone, _ := s.auditEvents(t, admin.token, "?filter[oauth-client]="+url.QueryEscape(clientID))
	if len(gone) != len(events) || !gone[0].ClientNull || gone[0].ClientID != clientID {
		t.Errorf("after the delete: %d events by client-id, %+v; want %d, data null, client-id %s", len(gone), gone, len(events), clientID)
	}
}

// TestAuditManyConcurrentWriters: more concurrent writers (32) than the
// API's database connections (models.DefaultMaxConns, 20) on the audited
// write path all succeed, each with its one audit event.
func TestAuditManyConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.editor(t, "editor@demo.test")
	const writers = 32
	errs := make(chan string, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slug := fmt.Sprintf("concurrent-%d", i)
			d := s.callQuiet(admin.token, http.MethodPost, "/pages", map[string]any{"data": map[string]any{"type": "pages",
				"attributes": map[string]any{"title": slug, "slug": slug}}})
			if d != 201 {
				errs <- fmt.Sprintf("%s: %d", slug, d)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent POST /pages failed: %s", e)
	}
	if got, _ := s.auditEvents(t, admin.token, "?filter[action]=pages.create&page[size]=100"); len(got) != writers {
		t.Errorf("%d pages.create events, want %d", len(got), writers)
	}
}

// callQuiet sends a JSON:API request from any goroutine and answers its
// status (0 when it could not be sent).
func (s *system) callQuiet(token, method, path string, body any) int {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/vnd.api+json")
	req.Header.Set("Accept", "application/vnd.api+json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.http.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
