-- Search per locale (issue 33, docs/plans/locales.md §2.9, docs/search.md
-- "Locales"). search_documents gets a document per record AND locale that
-- has values: locale '' holds the base columns, indexed with pressroom as
-- before (so nothing existing is indexed again), a tag ('de') holds the
-- record's "...@de" values, indexed with that language's configuration
-- (pressroom_locale_config). covered lists the locales in which a record
-- has values of its own, on each of its row documents, so a search in de
-- drops a base hit whose record has German values with a column test
-- instead of a lookup per hit (the plan measured 26 ms against 140 ms).
--
-- One transaction: the key changes to (item_type, item_id, locale,
-- drafted), and the trigger functions' ON CONFLICT must change with it
-- (the old key's ON CONFLICT has no matching constraint once it is gone).
-- Building the new key holds writes to search_documents (so every content
-- write) for about 130 ms per 91,000 documents (plan, appendix A).

-- The configurations: pressroom_<language> for every snowball language
-- PostgreSQL may ship, each a copy of its language with unaccent before
-- the stemmer (as pressroom is); a server without a language gets the
-- name anyway, as a copy of pressroom_simple (no stemming), so the names
-- that models.SearchConfigOf chooses in Go always exist and always agree
-- with pressroom_locale_config below.
CREATE TEXT SEARCH CONFIGURATION pressroom_simple (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION pressroom_simple
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, simple;
DO $$
DECLARE
    lang text;
BEGIN
    FOREACH lang IN ARRAY ARRAY['arabic', 'armenian', 'basque', 'catalan', 'danish', 'dutch', 'english', 'finnish',
        'french', 'german', 'greek', 'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'lithuanian', 'nepali',
        'norwegian', 'portuguese', 'romanian', 'russian', 'serbian', 'spanish', 'swedish', 'tamil', 'turkish', 'yiddish'] LOOP
        IF EXISTS (SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
                    WHERE n.nspname = 'pg_catalog' AND c.cfgname = lang)
            AND EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = lang || '_stem') THEN
            EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = pg_catalog.%I)', 'pressroom_' || lang, lang);
            EXECUTE format('ALTER TEXT SEARCH CONFIGURATION %I ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, %I',
                'pressroom_' || lang, lang || '_stem');
        ELSE
            EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = pressroom_simple)', 'pressroom_' || lang);
        END IF;
    END LOOP;
END $$;

-- The configuration of a BCP 47 tag's language (its primary subtag, with
-- the legacy in, mo, ji): the same table as models.SearchConfigOf, which
-- TestSearchConfigOfAgreesWithSQL compares.
CREATE FUNCTION pressroom_locale_config(tag text) RETURNS regconfig
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE lower(split_part(tag, '-', 1))
    WHEN 'ar' THEN 'pressroom_arabic'::regconfig
    WHEN 'hy' THEN 'pressroom_armenian'::regconfig
    WHEN 'eu' THEN 'pressroom_basque'::regconfig
    WHEN 'ca' THEN 'pressroom_catalan'::regconfig
    WHEN 'da' THEN 'pressroom_danish'::regconfig
    WHEN 'nl' THEN 'pressroom_dutch'::regconfig
    WHEN 'en' THEN 'pressroom_english'::regconfig
    WHEN 'fi' THEN 'pressroom_finnish'::regconfig
    WHEN 'fr' THEN 'pressroom_french'::regconfig
    WHEN 'de' THEN 'pressroom_german'::regconfig
    WHEN 'el' THEN 'pressroom_greek'::regconfig
    WHEN 'hi' THEN 'pressroom_hindi'::regconfig
    WHEN 'hu' THEN 'pressroom_hungarian'::regconfig
    WHEN 'id' THEN 'pressroom_indonesian'::regconfig
    WHEN 'in' THEN 'pressroom_indonesian'::regconfig
    WHEN 'ga' THEN 'pressroom_irish'::regconfig
    WHEN 'it' THEN 'pressroom_italian'::regconfig
    WHEN 'lt' THEN 'pressroom_lithuanian'::regconfig
    WHEN 'ne' THEN 'pressroom_nepali'::regconfig
    WHEN 'no' THEN 'pressroom_norwegian'::regconfig
    WHEN 'nb' THEN 'pressroom_norwegian'::regconfig
    WHEN 'nn' THEN 'pressroom_norwegian'::regconfig
    WHEN 'pt' THEN 'pressroom_portuguese'::regconfig
    WHEN 'ro' THEN 'pressroom_romanian'::regconfig
    WHEN 'mo' THEN 'pressroom_romanian'::regconfig
    WHEN 'ru' THEN 'pressroom_russian'::regconfig
    WHEN 'sr' THEN 'pressroom_serbian'::regconfig
    WHEN 'es' THEN 'pressroom_spanish'::regconfig
    WHEN 'sv' THEN 'pressroom_swedish'::regconfig
    WHEN 'ta' THEN 'pressroom_tamil'::regconfig
    WHEN 'tr' THEN 'pressroom_turkish'::regconfig
    WHEN 'yi' THEN 'pressroom_yiddish'::regconfig
    WHEN 'ji' THEN 'pressroom_yiddish'::regconfig
    ELSE 'pressroom_simple'::regconfig
END
$$;

-- The locales of flat "column@tag" keys that hold a value (null is no
-- value: a cleared translation), sorted.
CREATE FUNCTION pressroom_translated_locales(tr jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT coalesce(array_agg(DISTINCT substr(key, strpos(key, '@') + 1) ORDER BY substr(key, strpos(key, '@') + 1)), '{}')
  FROM jsonb_each(tr) WHERE strpos(key, '@') > 0 AND jsonb_typeof(value) <> 'null'
$$;

-- A draft's flat "column@tag" keys (a translations object, should one
-- ride along, counts too).
CREATE FUNCTION pressroom_draft_translations(d jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN jsonb_typeof(d -> 'translations') = 'object' THEN d -> 'translations' ELSE '{}' END
    || coalesce((SELECT jsonb_object_agg(key, value) FROM jsonb_each(d) WHERE strpos(key, '@') > 0), '{}')
$$;

-- The document of a record's values in locale loc (flat keys of tr), in
-- loc's configuration, weighted as the base documents are. A page's
-- locale document holds its slug in that locale (the base document holds
-- the path: a locale's path is derived later, in page_locale_paths).
-- NULL for a type that has no localized text.
CREATE FUNCTION pressroom_locale_search(typ text, tr jsonb, loc text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE typ
    WHEN 'pages' THEN setweight(to_tsvector(pressroom_locale_config(loc), coalesce(tr ->> ('title@' || loc), '')), 'A')
        || setweight(to_tsvector(pressroom_locale_config(loc), translate(coalesce(tr ->> ('slug@' || loc), ''), '/-_.', '    ')), 'B')
        || setweight(to_tsvector(pressroom_locale_config(loc), coalesce(tr ->> ('keywords@' || loc), '')), 'B')
        || setweight(to_tsvector(pressroom_locale_config(loc), coalesce(tr ->> ('description@' || loc), '')), 'C')
    WHEN 'contents' THEN setweight(to_tsvector(pressroom_locale_config(loc), coalesce(tr ->> ('title@' || loc), '')), 'A')
    WHEN 'content-blocks' THEN setweight(to_tsvector(pressroom_locale_config(loc), pressroom_html_text(coalesce(tr ->> ('body@' || loc), ''))), 'D')
END
$$;

-- Writers lock a row of pages, contents, content_blocks or drafts first
-- and search_documents after it (the search triggers): this migration takes
-- the same order up front, so a concurrent write waits for it instead of
-- deadlocking with it (bench/localemigration saw 40P01 without these).
-- Writes to these tables wait for the migration either way; reads of them
-- do not (SHARE ROW EXCLUSIVE).
LOCK TABLE pages, contents, content_blocks, drafts IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE search_documents IN ACCESS EXCLUSIVE MODE;

ALTER TABLE search_documents ADD COLUMN locale text NOT NULL DEFAULT '',
    ADD COLUMN covered text[] NOT NULL DEFAULT '{}';
ALTER TABLE search_documents DROP CONSTRAINT search_documents_pkey,
    ADD CONSTRAINT search_documents_pkey PRIMARY KEY (item_type, item_id, locale, drafted);

-- Used by the asset image trigger: the base document.
CREATE OR REPLACE FUNCTION pressroom_search_put(site uuid, typ text, id uuid, is_drafted boolean, is_live boolean, v tsvector) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF v IS NULL THEN
        DELETE FROM search_documents WHERE item_type = typ AND item_id = id AND locale = '' AND drafted = is_drafted;
        RETURN;
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search) VALUES (site, typ, id, is_drafted, is_live, v)
    ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live;
END $$;

-- A row's documents: the base one, as before, and one per locale its
-- translations hold values of (each carrying covered, those locales);
-- the documents of locales it no longer has are deleted. A row that has
-- and had no translations (every single-locale site) runs the one upsert
-- it ran before.
CREATE OR REPLACE FUNCTION pressroom_search_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
    is_live boolean := true;
    locs text[] := '{}';
    had boolean := false;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_documents WHERE item_type = TG_ARGV[0] AND item_id = OLD.id AND NOT drafted;
        RETURN NULL;
    END IF;
    CASE TG_ARGV[0]
        WHEN 'pages' THEN v := pressroom_page_search(NEW.title, NEW.path, NEW.keywords, NEW.description);
        WHEN 'contents' THEN v := pressroom_title_search(NEW.title);
        WHEN 'content-blocks' THEN v := pressroom_block_search(NEW.body);
        WHEN 'assets' THEN v := pressroom_asset_search(NEW.title, (SELECT file_name FROM asset_images WHERE asset_id = NEW.id));
    END CASE;
    IF TG_ARGV[0] <> 'assets' THEN
        is_live := NEW.published_at IS NOT NULL;
        IF NEW.translations <> '{}' THEN
            locs := pressroom_translated_locales(NEW.translations);
        END IF;
        IF TG_OP = 'UPDATE' THEN
            had := OLD.translations <> '{}';
        END IF;
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, covered, search)
    VALUES (NEW.site_id, TG_ARGV[0], NEW.id, false, is_live, locs, v)
    ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live, covered = EXCLUDED.covered
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live
            OR search_documents.covered IS DISTINCT FROM EXCLUDED.covered;
    IF locs <> '{}' THEN
        INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, covered, search)
        SELECT NEW.site_id, TG_ARGV[0], NEW.id, l, false, is_live, locs, pressroom_locale_search(TG_ARGV[0], NEW.translations, l)
          FROM unnest(locs) AS l
        ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live, covered = EXCLUDED.covered
            WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live
                OR search_documents.covered IS DISTINCT FROM EXCLUDED.covered;
    END IF;
    IF had THEN
        DELETE FROM search_documents WHERE item_type = TG_ARGV[0] AND item_id = NEW.id AND NOT drafted
            AND locale <> '' AND locale <> ALL (locs);
    END IF;
    RETURN NULL;
END $$;

-- A draft's documents (drafted true). The shared draft ('') writes the
-- base document from its drafted values, as before, and a create's also
-- one per locale its "...@tag" values hold. A locale's update draft writes
-- that locale's document, even when the draft clears every value of the
-- locale (an empty document: the drafted view then finds nothing of the
-- record in that locale rather than its live values). covered stays {}:
-- the drafted view tests for other locales' documents by the key
-- (models.Search), since a record's drafted view mixes drafted and row
-- documents.
CREATE OR REPLACE FUNCTION pressroom_search_draft() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
    tr jsonb;
    locs text[] := '{}';
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.locale <> '' THEN
            DELETE FROM search_documents WHERE item_type = OLD.item_type AND item_id = OLD.item_id AND locale = OLD.locale AND drafted;
        ELSIF OLD.event = 'create' THEN
            DELETE FROM search_documents WHERE item_type = OLD.item_type AND item_id = OLD.item_id AND drafted
                AND (locale = '' OR locale = ANY (pressroom_translated_locales(pressroom_draft_translations(OLD.drafted))));
        ELSE
            DELETE FROM search_documents WHERE item_type = OLD.item_type AND item_id = OLD.item_id AND locale = '' AND drafted;
        END IF;
        RETURN NULL;
    END IF;
    IF NEW.locale <> '' THEN
        v := pressroom_locale_search(NEW.item_type, pressroom_draft_translations(NEW.drafted), NEW.locale);
        IF v IS NOT NULL THEN
            INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, search)
            VALUES (NEW.site_id, NEW.item_type, NEW.item_id, NEW.locale, true, false, v)
            ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search
                WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search;
        END IF;
        RETURN NULL;
    END IF;
    IF NEW.event <> 'delete' THEN
        v := pressroom_draft_search(NEW.item_type, NEW.drafted);
    END IF;
    IF v IS NULL THEN -- a delete draft, or a type that is not searched
        DELETE FROM search_documents WHERE item_type = NEW.item_type AND item_id = NEW.item_id AND locale = '' AND drafted;
    ELSE
        INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search)
        VALUES (NEW.site_id, NEW.item_type, NEW.item_id, true, false, v)
        ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search
            WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search;
    END IF;
    IF NEW.event = 'create' AND v IS NOT NULL THEN
        tr := pressroom_draft_translations(NEW.drafted);
        IF tr <> '{}' THEN
            locs := pressroom_translated_locales(tr);
            INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, search)
            SELECT NEW.site_id, NEW.item_type, NEW.item_id, l, true, false, pressroom_locale_search(NEW.item_type, tr, l)
              FROM unnest(locs) AS l
            ON CONFLICT (item_type, item_id, locale, drafted) DO UPDATE SET search = EXCLUDED.search
                WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.event = 'create' THEN
        DELETE FROM search_documents WHERE item_type = NEW.item_type AND item_id = NEW.item_id AND drafted
            AND locale = ANY (pressroom_translated_locales(pressroom_draft_translations(OLD.drafted))) AND locale <> ALL (locs);
    END IF;
    RETURN NULL;
END $$;

-- The WHEN clauses learn the translations: a row's, a locale draft's
-- drafted values (all of them localized), a create's "...@tag" values.
DROP TRIGGER pages_search_update ON pages;
CREATE TRIGGER pages_search_update AFTER UPDATE ON pages FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.path IS DISTINCT FROM NEW.path
        OR OLD.keywords IS DISTINCT FROM NEW.keywords OR OLD.description IS DISTINCT FROM NEW.description
        OR OLD.published_at IS DISTINCT FROM NEW.published_at OR OLD.translations IS DISTINCT FROM NEW.translations)
    EXECUTE FUNCTION pressroom_search_row('pages');
DROP TRIGGER contents_search_update ON contents;
CREATE TRIGGER contents_search_update AFTER UPDATE ON contents FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.published_at IS DISTINCT FROM NEW.published_at
        OR OLD.translations IS DISTINCT FROM NEW.translations)
    EXECUTE FUNCTION pressroom_search_row('contents');
DROP TRIGGER content_blocks_search_update ON content_blocks;
CREATE TRIGGER content_blocks_search_update AFTER UPDATE ON content_blocks FOR EACH ROW
    WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.published_at IS DISTINCT FROM NEW.published_at
        OR OLD.translations IS DISTINCT FROM NEW.translations)
    EXECUTE FUNCTION pressroom_search_row('content-blocks');
DROP TRIGGER drafts_search_update ON drafts;
CREATE TRIGGER drafts_search_update AFTER UPDATE ON drafts FOR EACH ROW
    WHEN (OLD.event IS DISTINCT FROM NEW.event OR OLD.item_type IS DISTINCT FROM NEW.item_type OR OLD.item_id IS DISTINCT FROM NEW.item_id
        OR OLD.locale IS DISTINCT FROM NEW.locale
        OR OLD.drafted -> 'title' IS DISTINCT FROM NEW.drafted -> 'title'
        OR OLD.drafted -> 'path' IS DISTINCT FROM NEW.drafted -> 'path'
        OR OLD.drafted -> 'keywords' IS DISTINCT FROM NEW.drafted -> 'keywords'
        OR OLD.drafted -> 'description' IS DISTINCT FROM NEW.drafted -> 'description'
        OR OLD.drafted -> 'body' IS DISTINCT FROM NEW.drafted -> 'body'
        OR NEW.locale <> '' AND OLD.drafted IS DISTINCT FROM NEW.drafted
        OR NEW.event = 'create' AND pressroom_draft_translations(OLD.drafted) IS DISTINCT FROM pressroom_draft_translations(NEW.drafted))
    EXECUTE FUNCTION pressroom_search_draft();

-- The documents of what is translated already (none before a site has a
-- second locale).
INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, covered, search)
SELECT r.site_id, r.typ, r.id, l, false, r.live, r.locs, pressroom_locale_search(r.typ, r.tr, l)
  FROM (SELECT site_id, 'pages' AS typ, id, published_at IS NOT NULL AS live, translations AS tr, pressroom_translated_locales(translations) AS locs FROM pages WHERE translations <> '{}'
        UNION ALL SELECT site_id, 'contents', id, published_at IS NOT NULL, translations, pressroom_translated_locales(translations) FROM contents WHERE translations <> '{}'
        UNION ALL SELECT site_id, 'content-blocks', id, published_at IS NOT NULL, translations, pressroom_translated_locales(translations) FROM content_blocks WHERE translations <> '{}') r,
       unnest(r.locs) AS l;
UPDATE search_documents sd SET covered = r.locs
  FROM (SELECT 'pages' AS typ, id, pressroom_translated_locales(translations) AS locs FROM pages WHERE translations <> '{}'
        UNION ALL SELECT 'contents', id, pressroom_translated_locales(translations) FROM contents WHERE translations <> '{}'
        UNION ALL SELECT 'content-blocks', id, pressroom_translated_locales(translations) FROM content_blocks WHERE translations <> '{}') r
 WHERE sd.item_type = r.typ AND sd.item_id = r.id AND sd.locale = '' AND NOT sd.drafted;
INSERT INTO search_documents (site_id, item_type, item_id, locale, drafted, live, search)
SELECT site_id, item_type, item_id, locale, true, false, pressroom_locale_search(item_type, pressroom_draft_translations(drafted), locale)
  FROM drafts WHERE locale <> '' AND item_type IN ('pages', 'contents', 'content-blocks');
