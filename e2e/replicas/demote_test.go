package replicas_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestDemotedEditorAcrossReplicas: an admin demotes a member through
// replica A; the member's very next write through replica B is 403 (B
// keeps the token's lookup, role and all, only until a change to
// memberships is notified, and a request waits for what committed before
// it: docs/caching.md).
func TestDemotedEditorAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newFixture(t, setup{apis: 2, workers: 1})
	a, b := f.APIs[0].URL, f.APIs[1].URL
	admin := f.token(t, a, "editor@demo.test")
	member := f.token(t, b, "second@demo.test")
	if r := f.send(b, member, http.MethodPost, "/pages", pageBody("", map[string]any{"title": "Before", "slug": "before"})); r.Status != http.StatusCreated {
		t.Fatalf("the member's write on B before the demotion = %s", r)
	}
	r := f.send(a, admin, http.MethodGet, "/memberships?page[size]=100", nil)
	var list struct {
		Data []struct {
			ID         string
			Attributes struct{ Email string }
		}
	}
	if r.Status != 200 || json.Unmarshal(r.Raw, &list) != nil {
		t.Fatalf("GET /memberships on A = %s", r)
	}
	id := ""
	for _, m := range list.Data {
		if m.Attributes.Email == "second@demo.test" {
			id = m.ID
		}
	}
	if id == "" {
		t.Fatalf("no membership of second@demo.test in %s", r.Raw)
	}
	demote := map[string]any{"data": map[string]any{"type": "memberships", "id": id, "attributes": map[string]any{"role": "viewer"}}}
	if r := f.send(a, admin, http.MethodPatch, "/memberships/"+id, demote); r.Status != http.StatusOK {
		t.Fatalf("demote on A = %s", r)
	}
	if r := f.send(b, member, http.MethodPost, "/pages", pageBody("", map[string]any{"title": "After", "slug": "after"})); r.Status != http.StatusForbidden {
		t.Errorf("the demoted member's next write on B = %s, want 403", r)
	}
	if r := f.send(b, member, http.MethodGet, "/pages", nil); r.Status != http.StatusOK {
		t.Errorf("the demoted member (a viewer) reads on B = %s, want 200", r)
	}
}
