DROP INDEX IF EXISTS pages_site_parent_slug_idx;
ALTER TABLE pages DROP CONSTRAINT IF EXISTS pages_live_path_excl;
