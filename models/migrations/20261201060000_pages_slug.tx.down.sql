DROP INDEX pages_site_slug_idx;
