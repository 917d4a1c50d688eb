-- Locales (issue 33, docs/plans/locales.md §1.4): one site in several
-- languages. Every statement is catalogue-only or on small tables: no value
-- moves, since every row's own columns are its site's base locale's values.
-- The search changes of the plan (search_documents.locale, its key) are a
-- later migration.

ALTER TABLE sites
    ADD COLUMN locales text[] NOT NULL DEFAULT '{en}',
    ADD COLUMN base_locale text NOT NULL DEFAULT 'en',
    ADD COLUMN locale_fallbacks jsonb NOT NULL DEFAULT '{}',
    -- Derived by PATCH /site (models.ChainsOf): tag -> [tag, its fallbacks...,
    -- default]; read with the token, so a request's locale costs no query.
    ADD COLUMN locale_chains jsonb NOT NULL DEFAULT '{"en": ["en"]}',
    ADD COLUMN require_default_locale boolean NOT NULL DEFAULT true,
    ADD CONSTRAINT sites_locales_bounded CHECK (cardinality(locales) BETWEEN 1 AND 20),
    ADD CONSTRAINT sites_base_locale_listed CHECK (base_locale = ANY (locales));

-- The values of every locale but the base: {"title@de": "...", ...}. The
-- row's own columns stay the base locale's, so no value moves.
ALTER TABLE pages ADD COLUMN translations jsonb NOT NULL DEFAULT '{}',
    ALTER COLUMN title DROP NOT NULL;   -- a create in German only (require-default-locale false)
ALTER TABLE contents ADD COLUMN translations jsonb NOT NULL DEFAULT '{}',
    ALTER COLUMN title DROP NOT NULL;
ALTER TABLE content_blocks ADD COLUMN translations jsonb NOT NULL DEFAULT '{}';

-- Drafts per record and locale ('' = the shared draft: shared attributes and
-- the base locale's values, what a draft is today; a tag: an update of that
-- locale's values only).
ALTER TABLE drafts ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE drafts ADD CONSTRAINT drafts_locale_update CHECK (locale = '' OR event = 'update');
ALTER TABLE drafts DROP CONSTRAINT drafts_item_type_item_id_key;
-- Same name as the constraint it replaces: onePendingDraftPerItem (engine.go),
-- and replicas still running the previous release, keep recognising the
-- violation.
CREATE UNIQUE INDEX drafts_item_type_item_id_key ON drafts (item_type, item_id, locale);

ALTER TABLE versions ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE hyperlinks ADD COLUMN locale text NOT NULL DEFAULT '';

-- Resolved per-locale paths of every page in every non-base locale of its
-- site (the base path stays pages.path). Derived, like pages.path, by the
-- engine (models/drafts/localepaths.go).
CREATE TABLE page_locale_paths (
    site_id   uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    page_id   uuid NOT NULL REFERENCES pages (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    locale    text NOT NULL,
    parent_id uuid,
    slug      text NOT NULL,   -- the resolved slug (own, or the fallback's)
    path      text NOT NULL,
    live      boolean NOT NULL,
    PRIMARY KEY (page_id, locale),
    -- One live page per path per locale (and so per parent and slug), checked at commit.
    CONSTRAINT page_locale_paths_live_excl EXCLUDE USING btree
        (site_id WITH =, locale WITH =, path WITH =) WHERE (live) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX page_locale_paths_sibling_idx ON page_locale_paths (site_id, locale, parent_id, slug);

-- live follows pages.published_at (a create's publish; a delete cascades).
CREATE FUNCTION pressroom_locale_paths_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE page_locale_paths SET live = NEW.published_at IS NOT NULL WHERE page_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER pages_locale_paths_live AFTER UPDATE OF published_at ON pages FOR EACH ROW
    WHEN (OLD.published_at IS DISTINCT FROM NEW.published_at) EXECUTE FUNCTION pressroom_locale_paths_live();
