\timing on
-- (A') jsonb per attribute: the localized columns change type, values under the default tag.
BEGIN;
SET lock_timeout = '5s';
ALTER TABLE pages DROP CONSTRAINT pages_live_path_excl;
DROP TRIGGER pages_search_update ON pages;
DROP INDEX pages_title_trgm_idx, pages_site_parent_slug_idx, contents_title_trgm_idx;
ALTER TABLE pages ALTER COLUMN title TYPE jsonb USING jsonb_build_object('en', title),
    ALTER COLUMN description TYPE jsonb USING jsonb_build_object('en', description),
    ALTER COLUMN keywords TYPE jsonb USING jsonb_build_object('en', keywords),
    ALTER COLUMN slug TYPE jsonb USING jsonb_build_object('en', slug);
DROP TRIGGER contents_search_update ON contents;
ALTER TABLE contents ALTER COLUMN title TYPE jsonb USING jsonb_build_object('en', title);
DROP TRIGGER content_blocks_search_update ON content_blocks;
ALTER TABLE content_blocks ALTER COLUMN body DROP DEFAULT, ALTER COLUMN body TYPE jsonb USING jsonb_build_object('en', body);
ROLLBACK;
