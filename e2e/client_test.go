package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/client"
)

// checkedTransport checks every response the generated client receives
// against the system's /openapi.json, as call does for its own requests.
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

// TestGeneratedClientCreatesAndPublishesAPage uses the client oapi-codegen
// generated from /openapi.json (package client) the way an integrator
// would: create a page, publish its draft, read the published page.
func TestGeneratedClientCreatesAndPublishesAPage(t *testing.T) {
	t.Parallel()
	s := start(t)
	token := s.token(t, "editor@demo.test")
	ctx := context.Background()
	c, err := client.NewClientWithResponses(s.URL,
		client.WithHTTPClient(&http.Client{Transport: checkedTransport{t, s}}),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "application/vnd.api+json")
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}

	// The description types the content kinds' attributes (they were {}):
	// a create names its title as a field, and a read gets it back as one.
	var page client.PagesCreateRequest
	page.Data.Type = "pages"
	slug := "generated"
	page.Data.Attributes = &client.PagesCreateRequestAttributes{Title: "Generated", Slug: &slug}
	created, err := c.PostPagesWithApplicationVndAPIPlusJSONBodyWithResponse(ctx, &client.PostPagesParams{}, page)
	if err != nil {
		t.Fatal(err)
	}
	if created.StatusCode() != 201 || created.ApplicationvndApiJSON201 == nil {
		t.Fatalf("POST /pages = %d %s", created.StatusCode(), created.Body)
	}
	p := created.ApplicationvndApiJSON201.Data
	if p.Relationships == nil || p.Relationships.Draft == nil || p.Relationships.Draft.Data == nil {
		t.Fatalf("the created page names no draft: %s", created.Body)
	}
	draftID := p.Relationships.Draft.Data.Id

	var drafts client.RelationshipData_Data
	if err := drafts.FromRelationshipDataData2(client.RelationshipDataData2{{Type: "drafts", Id: draftID}}); err != nil {
		t.Fatal(err)
	}
	var rev client.RevisionsCreateRequest
	rev.Data.Type = "revisions"
	comments := "from the generated client"
	rev.Data.Attributes = &client.RevisionsCreateRequestAttributes{Comments: &comments}
	rev.Data.Relationships = &map[string]client.RelationshipData{"drafts": {Data: &drafts}}
	published, err := c.PostRevisionsWithApplicationVndAPIPlusJSONBodyWithResponse(ctx, &client.PostRevisionsParams{}, rev)
	if err != nil {
		t.Fatal(err)
	}
	if published.StatusCode() != 201 || published.ApplicationvndApiJSON201 == nil {
		t.Fatalf("POST /revisions = %d %s", published.StatusCode(), published.Body)
	}
	if a := published.ApplicationvndApiJSON201.Data.Attributes; a == nil || a.Status == nil || *a.Status != "published" {
		t.Errorf("revision = %s", published.Body)
	}

	live, err := c.GetPagesIdWithResponse(ctx, uuid.MustParse(p.Id), &client.GetPagesIdParams{})
	if err != nil {
		t.Fatal(err)
	}
	if live.StatusCode() != 200 || live.ApplicationvndApiJSON200 == nil || live.ApplicationvndApiJSON200.Data.Attributes == nil ||
		live.ApplicationvndApiJSON200.Data.Attributes.Title == nil || *live.ApplicationvndApiJSON200.Data.Attributes.Title != "Generated" {
		t.Fatalf("GET /pages/%s = %d %s", p.Id, live.StatusCode(), live.Body)
	}
}
