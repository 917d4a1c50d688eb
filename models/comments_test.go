package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/models"
	"github.com/pressroom/pressroom/testsupport"
)

// The comments linkage of a draft (rendered on every include=draft read of
// a drafted record) reads the draft's own comments through
// comments_item_idx, not every comment of the site: with 5,000 comments on
// other drafts it was a sequential scan of them all (9.7 ms at 100,000).
func TestCommentPagesReadsOnlyTheItemsComments(t *testing.T) {
	db := testsupport.NewDatabase(t)
	ctx := context.Background()
	site, err := models.CreateSite(ctx, db, "Comments", "comments")
	if err != nil {
		t.Fatal(err)
	}
	target := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO comments (id, site_id, item_type, item_id, body)
  SELECT gen_random_uuid(), ?0, 'drafts', CASE WHEN g <= 2 THEN ?1::uuid ELSE gen_random_uuid() END, 'note ' || g
  FROM generate_series(1, 5000) g`, site.ID, target); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE comments"); err != nil {
		t.Fatal(err)
	}
	var rows []models.Ranked
	stmts := db.Statements.During(func() {
		if rows, err = models.CommentPages(ctx, db, site.ID, "drafts", []uuid.UUID{target}, models.Window{Limit: 20}); err != nil {
			t.Fatal(err)
		}
	})
	if len(rows) != 2 || rows[0].Parent != target || rows[1].Total != 2 {
		t.Fatalf("ranked comments of the draft = %+v, want its 2", rows)
	}
	if len(stmts) != 1 {
		t.Fatalf("CommentPages ran %d statements, want 1: %q", len(stmts), stmts)
	}
	var plan []string
	if err := db.NewRaw("EXPLAIN "+stmts[0]).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "comments_item_idx") || strings.Contains(text, "Seq Scan on comments") {
		t.Errorf("the comments of one draft are not read by comments_item_idx:\n%s", text)
	}
}
