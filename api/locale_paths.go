package api

import (
	"context"

	"github.com/google/uuid"

	"github.com/pressroom/pressroom/api/jsonapi"
	"github.com/pressroom/pressroom/models/drafts"
)

// Pages' paths in a locale (docs/locales.md, "Paths in a locale"). On a
// site with several locales a page's path attribute is its path in the
// request's locale, and meta.alternates maps every site locale to the
// page's path in it (for hreflang links): the live paths on a live read
// (page_locale_paths, one lookup per page), the drafted ones with
// include=draft or under a preview (drafts.Engine.DraftedLocalePaths, one
// walk per page for all locales). A site with one locale renders as
// before, without alternates and without a query.

// localePaths sets the path attribute and meta.alternates of rs, the
// resources of the page views (drafted: as drafted).
func (h contentHandler) localePaths(ctx context.Context, siteID uuid.UUID, views []*drafts.View, rs []*jsonapi.Resource, drafted bool) error {
	site := drafts.SiteLocalesOf(ctx)
	if h.kind != drafts.Pages || len(site.Locales) < 2 || len(views) == 0 {
		return nil
	}
	tag := drafts.LocaleOf(ctx).Tag
	if tag == "" {
		tag = site.Default()
	}
	ids := make([]uuid.UUID, len(views))
	for i, v := range views {
		ids[i] = v.Row.ID()
	}
	var per map[uuid.UUID]map[string]string
	var err error
	if drafted {
		per, err = h.engine.DraftedLocalePaths(ctx, h.db, siteID, site, ids)
	} else {
		per, err = drafts.LocalePaths(ctx, h.db, siteID, ids)
	}
	if err != nil {
		return err
	}
	for i, id := range ids {
		attrs, ok := rs[i].Attributes.(map[string]any)
		if !ok {
			continue
		}
		// The base path is the one rendered (pages.path, or the drafted
		// one); a locale without a row (a derivation that never ran) or a
		// drafted walk that found a loop reads as the base.
		alternates := make(map[string]any, len(site.Locales))
		for _, l := range site.Locales {
			alternates[l] = attrs["path"]
			if p, ok := per[id][l]; ok {
				alternates[l] = p
			}
		}
		attrs["path"] = alternates[tag]
		if rs[i].Meta == nil {
			rs[i].Meta = map[string]any{}
		}
		rs[i].Meta["alternates"] = alternates
	}
	return nil
}
