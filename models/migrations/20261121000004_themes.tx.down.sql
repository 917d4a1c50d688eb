ALTER TABLE sites DROP CONSTRAINT sites_theme_fkey, DROP COLUMN theme_id, DROP COLUMN version;
DROP TABLE theme_assets;
ALTER TABLE assets DROP CONSTRAINT assets_site_id_id_key;
DROP TABLE layouts;
DROP TABLE themes;
