package drafts

import (
	"context"
	"fmt"
	"regexp"
	"sort"
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

// resolve turns hrefs into hyperlinks of the base locale's body: page
// paths of the site, and URLs of its assets.
func (e *Engine) resolve(ctx context.Context, db bun.IDB, siteID uuid.UUID, links []string) ([]Hyperlink, error) {
	return e.resolveIn(ctx, db, siteID, "", links)
}

// resolveIn turns the hrefs of a body in locale ("" the base) into
// hyperlinks of that locale: a path is matched against the locale's paths
// (page_locale_paths; the base's are pages.path), so a German body links
// German paths; an asset's URL is one in every locale.
func (e *Engine) resolveIn(ctx context.Context, db bun.IDB, siteID uuid.UUID, locale string, links []string) ([]Hyperlink, error) {
	var paths []string
	var out []Hyperlink
	for _, h := range links {
		switch {
		case strings.HasPrefix(h, "/"):
			paths = append(paths, strings.SplitN(strings.SplitN(h, "?", 2)[0], "#", 2)[0])
		case e.AssetURLPrefix != "" && strings.HasPrefix(h, e.AssetURLPrefix+siteID.String()+"/"):
			rest := strings.TrimPrefix(h, e.AssetURLPrefix+siteID.String()+"/")
			if id, err := uuid.Parse(strings.SplitN(rest, "/", 2)[0]); err == nil {
				out = append(out, Hyperlink{LinkedType: "assets", LinkedID: id, Href: h, Locale: locale})
			}
		}
	}
	if len(paths) > 0 {
		var pages []struct {
			ID   uuid.UUID `bun:"id"`
			Path string    `bun:"path"`
		}
		sel := db.NewSelect().Table("pages").Column("id", "path").Where("site_id = ? AND path IN (?)", siteID, bun.In(paths))
		if locale != "" {
			sel = db.NewSelect().Table("page_locale_paths").ColumnExpr("page_id AS id, path").
				Where("site_id = ? AND locale = ? AND path IN (?)", siteID, locale, bun.In(paths))
		}
		if err := sel.Scan(ctx, &pages); err != nil {
			return nil, fmt.Errorf("resolve page links in %q: %w", locale, err)
		}
		for _, p := range pages {
			out = append(out, Hyperlink{LinkedType: "pages", LinkedID: p.ID, Href: p.Path, Locale: locale})
		}
	}
	return out, nil
}

// bodyKeys are the flat keys of the bodies draft d holds in state, each
// indexed in its own locale: a locale's draft its locale's body
// ("body@de"), the shared draft the base body and, for a create (which
// holds every locale's values until its first publish), every locale's.
func bodyKeys(d *Draft, state Row) []string {
	if d.Locale != "" {
		return []string{"body@" + d.Locale}
	}
	keys := []string{"body"}
	if d.Event == EventCreate {
		var tagged []string
		for k := range state {
			if c, tag := SplitKey(k); c == "body" && tag != "" {
				tagged = append(tagged, k)
			}
		}
		sort.Strings(tagged)
		keys = append(keys, tagged...)
	}
	return keys
}

// indexLinks records the hyperlinks of a drafted block's bodies under its
// draft, each in the locale of its body (bodyKeys).
func (e *Engine) indexLinks(ctx context.Context, tx bun.IDB, k *Kind, siteID uuid.UUID, d *Draft, state Row) error {
	if k != ContentBlocks {
		return nil
	}
	if _, err := tx.NewDelete().Model((*Hyperlink)(nil)).Where("draft_id = ?", d.ID).Exec(ctx); err != nil {
		return err
	}
	var links []Hyperlink
	for _, key := range bodyKeys(d, state) {
		body, _ := state[key].(string)
		_, tag := SplitKey(key)
		found, err := e.resolveIn(ctx, tx, siteID, tag, hrefs(body))
		if err != nil {
			return err
		}
		links = append(links, found...)
	}
	if len(links) == 0 {
		return nil
	}
	now := time.Now().UTC()
	for i := range links {
		links[i].SiteRow, links[i].LinkableID, links[i].DraftID = models.SiteRow{ID: uuid.New(), SiteID: siteID, CreatedAt: now}, d.ItemID, &d.ID
	}
	_, err := tx.NewInsert().Model(&links).Exec(ctx)
	return err
}

// publishLinks makes the drafted links of the published block drafts ds
// the live ones: a draft's live links are replaced by those indexed under
// it, in its locale only (a German body's publish leaves the English
// body's links), every locale's for a create or a delete.
func publishLinks(ctx context.Context, tx bun.IDB, ds []*Draft) error {
	if len(ds) == 0 {
		return nil
	}
	if _, err := tx.NewRaw(`DELETE FROM hyperlinks h USING drafts d
  WHERE d.id IN (?) AND h.linkable_id = d.item_id AND h.draft_id IS NULL AND (d.event <> 'update' OR h.locale = d.locale)`,
		bun.In(draftIDs(ds))).Exec(ctx); err != nil {
		return fmt.Errorf("replace live links: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*Hyperlink)(nil)).Set("draft_id = NULL").Where("draft_id IN (?)", bun.In(draftIDs(ds))).Exec(ctx); err != nil {
		return fmt.Errorf("publish drafted links: %w", err)
	}
	return nil
}
