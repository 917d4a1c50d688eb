-- pg_trgm stays: another schema object may have come to use it.
DROP INDEX asset_uploads_asset_idx;
DROP INDEX content_blocks_site_created_idx;
DROP INDEX contents_site_created_idx;
DROP INDEX pages_site_created_idx;
DROP INDEX pages_path_prefix_idx;
DROP INDEX assets_title_trgm_idx;
DROP INDEX contents_title_trgm_idx;
DROP INDEX pages_title_trgm_idx;
