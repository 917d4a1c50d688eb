package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/pressroom/pressroom/client"
)

// checkedTransport checks every response the Go client receives against
// the system's /openapi.json, as call does for its own requests.
type checkedTransport struct {
	t *testing.T
	s *system
}

func (c checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := c.s.openapi.Check(req, resp.StatusCode, resp.Header, body); err != nil {
		c.t.Error(err)
	}
	return resp, nil
}

// TestClientCreatesAndPublishesAPage uses the API's Go client (package
// client, which the CLI, the benchmarks and the replica tests use) the way
// an integrator would: create a page, publish its draft, read the
// published page, and read a refusal as an *client.Error.
func TestClientCreatesAndPublishesAPage(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	c := &client.Client{Base: s.URL, Token: s.token(t, "editor@demo.test"), HTTP: &http.Client{Transport: checkedTransport{t, s}}}

	created, err := c.Call(ctx, http.MethodPost, "/pages", client.Data("pages", "", map[string]any{"title": "From the client", "slug": "from-the-client"}))
	if err != nil {
		t.Fatal(err)
	}
	if created.Status != http.StatusCreated {
		t.Fatalf("POST /pages = %s", created)
	}
	page, err := created.Resource()
	if err != nil {
		t.Fatal(err)
	}
	var draft struct{ Data struct{ ID string } }
	if err := json.Unmarshal(page.Relationships["draft"], &draft); err != nil || draft.Data.ID == "" {
		t.Fatalf("the created page names no draft: %s", created)
	}

	rev := client.Data("revisions", "", map[string]any{"comments": "from the Go client"})
	rev["data"].(map[string]any)["relationships"] = map[string]any{"drafts": map[string]any{"data": []map[string]any{{"type": "drafts", "id": draft.Data.ID}}}}
	published, err := c.Call(ctx, http.MethodPost, "/revisions", rev)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := published.Resource(); published.Status != http.StatusCreated || err != nil || r.Attributes["status"] != "published" {
		t.Fatalf("POST /revisions = %s", published)
	}

	live, err := c.Call(ctx, http.MethodGet, "/pages/"+page.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := live.Resource(); live.Status != http.StatusOK || err != nil || r.Attributes["title"] != "From the client" {
		t.Fatalf("GET /pages/%s = %s", page.ID, live)
	}

	missing, err := c.Call(ctx, http.MethodGet, "/pages/00000000-0000-4000-8000-000000000000", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := missing.Err(http.MethodGet, "/pages/…"); e.Status != http.StatusNotFound || e.Code == "" || e.Detail == "" {
		t.Errorf("a missing page's answer as an error = %+v (%s)", e, missing)
	}
}
