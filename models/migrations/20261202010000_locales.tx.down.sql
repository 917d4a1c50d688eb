-- Refuses, naming what it would lose, while any record holds a value of a
-- locale other than its site's base or any draft is a locale's: dropping
-- them would lose content. Strip those locales first (PATCH /site with
-- meta.force).
DO $$
DECLARE
    n_pages bigint;
    n_contents bigint;
    n_blocks bigint;
    n_drafts bigint;
BEGIN
    SELECT count(*) INTO n_pages FROM pages WHERE translations <> '{}';
    SELECT count(*) INTO n_contents FROM contents WHERE translations <> '{}';
    SELECT count(*) INTO n_blocks FROM content_blocks WHERE translations <> '{}';
    SELECT count(*) INTO n_drafts FROM drafts WHERE locale <> '';
    IF n_pages + n_contents + n_blocks + n_drafts > 0 THEN
        RAISE EXCEPTION 'locales are in use: % pages, % contents, % content blocks hold translations and % drafts are of a locale; remove those locales first (PATCH /site with meta.force)',
            n_pages, n_contents, n_blocks, n_drafts;
    END IF;
    IF EXISTS (SELECT 1 FROM pages WHERE title IS NULL) OR EXISTS (SELECT 1 FROM contents WHERE title IS NULL) THEN
        RAISE EXCEPTION 'some pages or contents have no title in their base locale; give them one first';
    END IF;
END $$;

DROP TRIGGER pages_locale_paths_live ON pages;
DROP FUNCTION pressroom_locale_paths_live();
DROP TABLE page_locale_paths;

ALTER TABLE hyperlinks DROP COLUMN locale;
ALTER TABLE versions DROP COLUMN locale;

DROP INDEX drafts_item_type_item_id_key;
ALTER TABLE drafts ADD CONSTRAINT drafts_item_type_item_id_key UNIQUE (item_type, item_id);
ALTER TABLE drafts DROP CONSTRAINT drafts_locale_update;
ALTER TABLE drafts DROP COLUMN locale;

ALTER TABLE content_blocks DROP COLUMN translations;
ALTER TABLE contents DROP COLUMN translations, ALTER COLUMN title SET NOT NULL;
ALTER TABLE pages DROP COLUMN translations, ALTER COLUMN title SET NOT NULL;

ALTER TABLE sites
    DROP CONSTRAINT sites_base_locale_listed,
    DROP CONSTRAINT sites_locales_bounded,
    DROP COLUMN require_default_locale,
    DROP COLUMN locale_chains,
    DROP COLUMN locale_fallbacks,
    DROP COLUMN base_locale,
    DROP COLUMN locales;
