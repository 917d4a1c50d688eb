DROP TABLE IF EXISTS preview_links;
