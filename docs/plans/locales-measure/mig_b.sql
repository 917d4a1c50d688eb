\timing on
BEGIN;
SET lock_timeout = '5s';
CREATE TABLE page_locales (page_id uuid NOT NULL REFERENCES pages (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, site_id uuid NOT NULL, locale text NOT NULL,
  title text, description text, keywords text, slug text, path text NOT NULL, live boolean NOT NULL, PRIMARY KEY (page_id, locale));
CREATE TABLE content_locales (content_id uuid NOT NULL REFERENCES contents (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, site_id uuid NOT NULL, locale text NOT NULL, title text, PRIMARY KEY (content_id, locale));
CREATE TABLE content_block_locales (block_id uuid NOT NULL REFERENCES content_blocks (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, site_id uuid NOT NULL, locale text NOT NULL, body text, PRIMARY KEY (block_id, locale));
-- no write may land between the copy's snapshot and the switch to the new tables
LOCK TABLE pages, contents, content_blocks IN SHARE MODE;
SELECT clock_timestamp() AS locked_at \gset
INSERT INTO page_locales SELECT id, site_id, 'en', title, description, keywords, slug, path, published_at IS NOT NULL FROM pages;
INSERT INTO content_locales SELECT id, site_id, 'en', title FROM contents;
INSERT INTO content_block_locales SELECT id, site_id, 'en', body FROM content_blocks;
SET CONSTRAINTS ALL IMMEDIATE;
ALTER TABLE page_locales ADD CONSTRAINT page_locales_live_excl EXCLUDE USING btree (site_id WITH =, locale WITH =, path WITH =) WHERE (live) DEFERRABLE INITIALLY DEFERRED;
SELECT clock_timestamp() - :'locked_at'::timestamptz AS share_lock_window;
COMMIT;
