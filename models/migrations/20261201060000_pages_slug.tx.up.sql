-- The render route of a preview link (GET {link}/render/<path>) looks a
-- page up by its path or its last slug (drafts.Engine.pageAt: an
-- ancestor's drafted slug or parent may have moved it there). No index led
-- with the slug after the site (pages_site_parent_slug_idx has parent_id
-- between them), so every render scanned the site's pages: 36 ms at 33,000.
-- Built in the migration's transaction: it holds off page writes for the
-- build, a short one for this one column.
CREATE INDEX pages_site_slug_idx ON pages (site_id, slug) WHERE trashed_at IS NULL;
