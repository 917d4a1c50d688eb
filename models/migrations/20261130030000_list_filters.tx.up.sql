-- Operator filters and cursor pages of the lists (issue 32 §2,
-- docs/api-conventions.md). filter[title][contains] is an ILIKE '%…%':
-- a trigram GIN index on the title answers it, and the site_id condition
-- is checked on the rows it finds (e2e/filters_test.go
-- checkFilterIndexes reads the plans). filter[path][prefix] is a LIKE '…%' in the
-- C collation's order: text_pattern_ops. filter[user] of an asset reads
-- its latest upload. The content lists' default order (created_at, id)
-- per site serves their cursor pages (page[after], page[before]).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX pages_title_trgm_idx ON pages USING gin (title gin_trgm_ops);
CREATE INDEX contents_title_trgm_idx ON contents USING gin (title gin_trgm_ops);
CREATE INDEX assets_title_trgm_idx ON assets USING gin (title gin_trgm_ops);
CREATE INDEX pages_path_prefix_idx ON pages (site_id, path text_pattern_ops);
CREATE INDEX pages_site_created_idx ON pages (site_id, created_at, id);
CREATE INDEX contents_site_created_idx ON contents (site_id, created_at, id);
CREATE INDEX content_blocks_site_created_idx ON content_blocks (site_id, created_at, id);
CREATE INDEX asset_uploads_asset_idx ON asset_uploads (asset_id, created_at);
