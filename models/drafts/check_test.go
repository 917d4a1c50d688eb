package drafts_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
)

// state is kind k's create defaults with the given columns laid over them.
func state(k *drafts.Kind, cols map[string]any) drafts.Row {
	s := k.Defaults()
	for c, v := range cols {
		s[c] = v
	}
	return s
}

// refusal checks that err is a domain error of kind at place with code,
// and detail when not "".
func refusal(t *testing.T, what string, err error, kind error, at models.Place, code, detail string) {
	t.Helper()
	var de *models.Error
	if !errors.As(err, &de) || !errors.Is(err, kind) || de.At != at || de.Code != code || (detail != "" && de.Detail != detail) {
		t.Errorf("%s: got %#v, want %v %s at %+v %q", what, err, kind, code, at, detail)
	}
}

// TestCheckAttributesFollowsTheDeclarations: every rule the content kinds'
// fields declare refuses what it should with the code, attribute name and
// sentence clients have always had (they were api/content_validate.go's),
// and a state that keeps them all passes. Fails on the old code, which had
// no declarations to judge by.
func TestCheckAttributesFollowsTheDeclarations(t *testing.T) {
	page := map[string]any{"title": "About", "slug": "about"}
	cases := []struct {
		name   string
		kind   *drafts.Kind
		cols   map[string]any
		attr   string
		code   string
		detail string
	}{
		{"page-type", drafts.Pages, map[string]any{"page_type": "blog"}, "page-type", "invalid_page_type", "page-type must be one of home, page, not_found, error, search."},
		{"slug pattern", drafts.Pages, map[string]any{"slug": "About"}, "slug", "invalid_slug", "slug must be lowercase letters, digits and inner hyphens (1 to 100); only the home page may have an empty slug."},
		{"slug hyphen end", drafts.Pages, map[string]any{"slug": "a-"}, "slug", "invalid_slug", ""},
		{"slug 101", drafts.Pages, map[string]any{"slug": strings.Repeat("a", 101)}, "slug", "invalid_slug", ""},
		{"empty slug off home", drafts.Pages, map[string]any{"slug": ""}, "slug", "invalid_slug", ""},
		{"title missing", drafts.Pages, map[string]any{"title": nil}, "title", "invalid_title", "title must be 1 to 200 characters."},
		{"title blank", drafts.Pages, map[string]any{"title": "   "}, "title", "invalid_title", ""},
		{"title 201", drafts.Pages, map[string]any{"title": strings.Repeat("é", 201)}, "title", "invalid_title", ""},
		{"description", drafts.Pages, map[string]any{"description": strings.Repeat("d", 1001)}, "description", "invalid_description", "description must be at most 1000 characters."},
		{"keywords", drafts.Pages, map[string]any{"keywords": strings.Repeat("k", 1001)}, "keywords", "invalid_keywords", "keywords must be at most 1000 characters."},
		{"canonical relative", drafts.Pages, map[string]any{"canonical_url": "/about"}, "canonical-url", "invalid_canonical_url", "canonical-url must be an absolute http(s) URL or null."},
		{"canonical ftp", drafts.Pages, map[string]any{"canonical_url": "ftp://x.test/"}, "canonical-url", "invalid_canonical_url", ""},
		{"canonical 2001 bytes", drafts.Pages, map[string]any{"canonical_url": "https://x.test/" + strings.Repeat("a", 1986)}, "canonical-url", "invalid_canonical_url", ""},
		{"content title", drafts.Contents, map[string]any{"title": ""}, "title", "invalid_title", "title must be 1 to 200 characters."},
		{"var-name missing", drafts.ContentBlocks, map[string]any{}, "var-name", "invalid_var_name", "var-name must start with a letter or _ and hold letters, digits, _ or - (at most 64)."},
		{"var-name digit", drafts.ContentBlocks, map[string]any{"var_name": "1x"}, "var-name", "invalid_var_name", ""},
		{"var-name 65", drafts.ContentBlocks, map[string]any{"var_name": strings.Repeat("v", 65)}, "var-name", "invalid_var_name", ""},
		{"data-type", drafts.ContentBlocks, map[string]any{"var_name": "v", "data_type": "pdf"}, "data-type", "invalid_data_type", "data-type must be one of text, html, image, link, markdown."},
		{"body", drafts.ContentBlocks, map[string]any{"var_name": "v", "body": strings.Repeat("b", drafts.MaxBody+1)}, "body", "invalid_body", "body must be at most 262144 bytes."},
	}
	for _, c := range cases {
		cols := map[string]any{}
		if c.kind == drafts.Pages {
			for k, v := range page {
				cols[k] = v
			}
		}
		for k, v := range c.cols {
			cols[k] = v
		}
		s := state(c.kind, cols)
		if v, ok := c.cols["title"]; ok && v == nil {
			delete(s, "title")
		}
		refusal(t, c.name, drafts.CheckAttributes(c.kind, s), models.ErrInvalid, models.Attr(c.attr), c.code, c.detail)
	}
	valid := []struct {
		kind *drafts.Kind
		cols map[string]any
	}{
		{drafts.Pages, page},
		{drafts.Pages, map[string]any{"title": "Home", "page_type": "home", "slug": ""}},
		{drafts.Pages, map[string]any{"title": strings.Repeat("é", 200), "slug": strings.Repeat("a", 100), "description": nil, "canonical_url": "https://x.test/about"}},
		{drafts.Pages, map[string]any{"title": "  T  ", "slug": "t", "canonical_url": nil, "keywords": strings.Repeat("k", 1000)}},
		{drafts.Contents, map[string]any{"title": "K"}},
		{drafts.ContentBlocks, map[string]any{"var_name": "_hero-1", "data_type": "markdown", "body": strings.Repeat("b", drafts.MaxBody)}},
	}
	for _, v := range valid {
		if err := drafts.CheckAttributes(v.kind, state(v.kind, v.cols)); err != nil {
			t.Errorf("%s %v: %v, want valid", v.kind.Type, v.cols, err)
		}
	}
}

// TestEngineCheckAcrossRecords: the rules across records, now the
// engine's, answer with the relationship or attribute name: a missing
// required reference, an unknown one (404 at the identifier's id, an id
// that is no UUID alike), one drafted for deletion, a parent loop, a
// second special page, a taken path.
func TestEngineCheckAcrossRecords(t *testing.T) {
	t.Parallel()
	w := newEngineWorld(t)
	w.create(drafts.Pages, "P", "")
	w.create(drafts.Pages, "C", "P")
	w.create(drafts.Pages, "Gone", "")
	w.publish("Gone")
	w.remove("Gone")
	check := func(k *drafts.Kind, id *uuid.UUID, s, prev drafts.Row) (err error) {
		w.tx(func(ctx context.Context, tx bun.Tx) error {
			err = w.e.Check(ctx, tx, k, w.site, id, s, prev)
			return nil
		})
		return err
	}
	newPage := func(slug string, cols map[string]any) drafts.Row {
		cols["title"], cols["slug"] = "T", slug
		return state(drafts.Pages, cols)
	}
	refusal(t, "content without page", check(drafts.Contents, nil, state(drafts.Contents, map[string]any{"title": "K"}), nil),
		models.ErrInvalid, models.Rel("page", models.PartMember), "missing_relationship", "The page relationship is required: the page.")
	refusal(t, "content on an unknown page", check(drafts.Contents, nil, state(drafts.Contents, map[string]any{"title": "K", "page_id": uuid.NewString()}), nil),
		models.ErrNotFound, models.Rel("page", models.PartID), "", "No page with that id.")
	refusal(t, "block on a non-uuid content", check(drafts.ContentBlocks, nil, state(drafts.ContentBlocks, map[string]any{"var_name": "v", "content_id": "x"}), nil),
		models.ErrNotFound, models.Rel("content", models.PartID), "", "No content with that id.")
	refusal(t, "unknown layout", check(drafts.Pages, nil, newPage("l", map[string]any{"layout_id": uuid.NewString()}), nil),
		models.ErrNotFound, models.Rel("layout", models.PartID), "", "No layout with that id.")
	refusal(t, "under a page drafted for deletion", check(drafts.Pages, nil, newPage("u", map[string]any{"parent_id": w.ids["Gone"].String()}), nil),
		models.ErrInvalid, models.Rel("parent", models.PartData), "drafted_for_deletion", "")
	p := w.ids["P"]
	prev := newPage("p", map[string]any{})
	refusal(t, "parent loop", check(drafts.Pages, &p, newPage("p", map[string]any{"parent_id": w.ids["C"].String()}), prev),
		models.ErrInvalid, models.Rel("parent", models.PartData), "parent_loop", "A page cannot be its own ancestor.")
	err := check(drafts.Pages, nil, newPage("p", map[string]any{}), nil)
	refusal(t, "path taken", err, models.ErrConflict, models.Attr("slug"), drafts.PathTaken, "")
	var de *models.Error
	if errors.As(err, &de) && de.Meta["page"].(map[string]any)["id"] != p.String() {
		t.Errorf("path taken names %v, want P %s", de.Meta, p)
	}
	w.create(drafts.Pages, "Home", "")
	w.update("Home", drafts.Change{"page_type": "home"})
	refusal(t, "second home page", check(drafts.Pages, nil, newPage("h2", map[string]any{"page_type": "home"}), nil),
		models.ErrInvalid, models.Attr("page-type"), "page_type_taken", "The site already has a home page; there can be only one.")
	if err := check(drafts.Pages, nil, newPage("free", map[string]any{"parent_id": p.String()}), nil); err != nil {
		t.Errorf("a valid page under P: %v", err)
	}
}
