package drafts

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/pressroom/pressroom/models"
)

// Hyperlink is a link from a content block's body to a page or an asset.
type Hyperlink struct {
	bun.BaseModel `bun:"table:hyperlinks,alias:h"`

	models.SiteRow
	LinkableID uuid.UUID  `bun:"linkable_id,type:uuid,notnull"`
	DraftID    *uuid.UUID `bun:"draft_id,type:uuid"`
	LinkedType string     `bun:"linked_type,notnull"`
	LinkedID   uuid.UUID  `bun:"linked_id,type:uuid,notnull"`
	Href       string     `bun:"href,notnull"`
	// Locale is the body's locale ("": the base; docs/locales.md).
	Locale string `bun:"locale,notnull"`
}

// hrefs finds href attributes in an HTML body (bounded: a body is text
// sent by an editor, at most the request body limit).
var hrefPattern = regexp.MustCompile(`(?i)href\s*=\s*(?:"([^"]*)"|'([^']*)')`)

const maxLinksPerBody = 500

func hrefs(body string) []string {
	var out []string
	for _, m := range hrefPattern.FindAllStringSubmatch(body, maxLinksPerBody) {
		h := m[1]
		if h == "" {
			h = m[2]
		}
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// resolve turns hrefs into hyperlinks: page paths of the site, and URLs
// of its assets.
func (e *Engine) resolve(ctx context.Context, db bun.IDB, siteID uuid.UUID, links []string) ([]Hyperlink, error) {
	var paths []string
	var out []Hyperlink
	for _, h := range links {
		switch {
		case strings.HasPrefix(h, "/"):
			paths = append(paths, strings.SplitN(strings.SplitN(h, "?", 2)[0], "#", 2)[0])
		case e.AssetURLPrefix != "" && strings.HasPrefix(h, e.AssetURLPrefix+siteID.String()+"/"):
			rest := strings.TrimPrefix(h, e.AssetURLPrefix+siteID.String()+"/")
			if id, err := uuid.Parse(strings.SplitN(rest, "/", 2)[0]); err == nil {
				out = append(out, Hyperlink{LinkedType: "assets", LinkedID: id, Href: h})
			}
		}
	}
	if len(paths) > 0 {
		var pages []struct {
			ID   uuid.UUID `bun:"id"`
			Path string    `bun:"path"`
		}
		if err := db.NewSelect().Table("pages").Column("id", "path").
			Where("site_id = ? AND path IN (?)", siteID, bun.In(paths)).Scan(ctx, &pages); err != nil {
			return nil, fmt.Errorf("resolve page links: %w", err)
		}
		for _, p := range pages {
			out = append(out, Hyperlink{LinkedType: "pages", LinkedID: p.ID, Href: p.Path})
		}
	}
	return out, nil
}

// indexLinks records the hyperlinks of a drafted block body under its draft.
func (e *Engine) indexLinks(ctx context.Context, tx bun.IDB, k *Kind, siteID uuid.UUID, d *Draft, state Row) error {
	if k != ContentBlocks {
		return nil
	}
	if _, err := tx.NewDelete().Model((*Hyperlink)(nil)).Where("draft_id = ?", d.ID).Exec(ctx); err != nil {
		return err
	}
	body, _ := state["body"].(string)
	links, err := e.resolve(ctx, tx, siteID, hrefs(body))
	if err != nil || len(links) == 0 {
		return err
	}
	now := time.Now().UTC()
	for i := range links {
		links[i].SiteRow, links[i].LinkableID, links[i].DraftID = models.SiteRow{ID: uuid.New(), SiteID: siteID, CreatedAt: now}, d.ItemID, &d.ID
	}
	_, err = tx.NewInsert().Model(&links).Exec(ctx)
	return err
}
