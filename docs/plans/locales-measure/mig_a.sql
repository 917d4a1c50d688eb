\timing on
BEGIN;
SET lock_timeout = '5s';
ALTER TABLE sites ADD COLUMN locales text[] NOT NULL DEFAULT '{en}',
  ADD COLUMN base_locale text NOT NULL DEFAULT 'en',
  ADD COLUMN locale_fallbacks jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN require_default_locale boolean NOT NULL DEFAULT true;
ALTER TABLE pages ADD COLUMN translations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE contents ADD COLUMN translations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE content_blocks ADD COLUMN translations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE versions ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE drafts ADD COLUMN locale text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX drafts_item_locale_key ON drafts (item_type, item_id, locale);
ALTER TABLE drafts DROP CONSTRAINT drafts_item_type_item_id_key;
ALTER TABLE search_documents ADD COLUMN locale text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX search_documents_locale_pkey ON search_documents (item_type, item_id, locale, drafted);
ALTER TABLE search_documents DROP CONSTRAINT search_documents_pkey, ADD CONSTRAINT search_documents_pkey PRIMARY KEY USING INDEX search_documents_locale_pkey;
CREATE OR REPLACE FUNCTION pressroom_search_put(site uuid, typ text, id uuid, is_drafted boolean, is_live boolean, v tsvector, loc text DEFAULT '') RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF v IS NULL THEN
        DELETE FROM search_documents WHERE item_type = typ AND item_id = id AND locale = loc AND drafted = is_drafted;
        RETURN;
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, search) VALUES (site, typ, id, loc, is_drafted, is_live, v)
    ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live;
END $$;
DROP FUNCTION pressroom_search_put(uuid, text, uuid, boolean, boolean, tsvector);
CREATE TABLE page_locale_paths (
    site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    page_id uuid NOT NULL REFERENCES pages (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    locale  text NOT NULL,
    parent_id uuid,
    slug    text NOT NULL,
    path    text NOT NULL,
    live    boolean NOT NULL,
    PRIMARY KEY (page_id, locale),
    CONSTRAINT page_locale_paths_live_excl EXCLUDE USING btree (site_id WITH =, locale WITH =, path WITH =) WHERE (live) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX page_locale_paths_slug_idx ON page_locale_paths (site_id, locale, parent_id, slug);
COMMIT;
