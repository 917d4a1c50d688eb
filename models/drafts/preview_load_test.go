package drafts_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/config"
	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/models/drafts"
	"github.com/pressroom/pressroom/testsupport"
)

// A read under a release's preview is one statement that reads the
// release's stamp with the record (the API checks a kept preview by it),
// lays the set's own draft over the row while the draft is as the set
// has it, and reads a draft written since the set was computed again:
// the read shows the draft as it is, and the stamp it saw moved.
func TestPreviewLoadReadsTheStampWithTheRecord(t *testing.T) {
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Preview", "preview")
	if err != nil {
		t.Fatal(err)
	}
	page, draft := uuid.New(), uuid.New()
	rel := &drafts.Release{SiteRecord: models.NewSiteRecord(site.ID), Title: "R"}
	if err := drafts.CreateRelease(ctx, db, rel); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO pages (id, site_id, page_type, slug, path, title, published_at) VALUES (?1, ?0, 'page', 'p', '/p', 'Live', now())`,
		`INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes, created_at, updated_at, version, release_id)
		 VALUES (?2, ?0, 'pages', ?1, 'update', '{"title": "Drafted"}', '{}', now(), now(), 1, ?3)`,
	} {
		if _, err := db.ExecContext(ctx, q, site.ID, page, draft, rel.ID); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	e := drafts.NewEngine(config.Storage{})
	p, err := e.PreviewRelease(ctx, db.DB, site.ID, rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	read := func(what, want string) drafts.ReleaseStamp {
		t.Helper()
		wctx, w := drafts.WithStampWatch(drafts.WithPreview(ctx, p))
		var views map[uuid.UUID]*drafts.View
		stmts := db.Statements.During(func() {
			if views, err = e.LoadMany(wctx, db.DB, drafts.Pages, site.ID, []uuid.UUID{page}, true); err != nil {
				t.Fatal(err)
			}
		})
		v := views[page]
		if v == nil || v.Drafted()["title"] != want {
			t.Fatalf("%s: the preview's page = %+v, want the title %q", what, v, want)
		}
		if what == "as computed" && len(stmts) != 1 {
			t.Errorf("%s: %d statements, want 1 (the stamp read with the page): %q", what, len(stmts), stmts)
		}
		s, ok := w.Seen()
		if !ok || s.Status != drafts.ReleaseOpen {
			t.Fatalf("%s: stamp seen = %+v %v", what, s, ok)
		}
		return s
	}
	before := read("as computed", "Drafted")
	if _, err := db.ExecContext(ctx, `UPDATE drafts SET drafted = '{"title": "Edited"}', version = version + 1, updated_at = now() WHERE id = ?`, draft); err != nil {
		t.Fatal(err)
	}
	after := read("after an edit of the staged draft", "Edited")
	if after == before {
		t.Errorf("the stamp did not move with the edit of a staged draft: %+v", after)
	}
}
