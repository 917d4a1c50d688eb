ALTER TABLE preview_links DROP COLUMN locale;
