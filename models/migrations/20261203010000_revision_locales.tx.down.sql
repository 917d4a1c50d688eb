ALTER TABLE revisions DROP COLUMN locales;
