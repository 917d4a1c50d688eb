-- Writers lock a row of pages, contents, content_blocks or drafts first
-- and search_documents after it (the search triggers): this migration takes
-- the same order up front, so a concurrent write waits for it instead of
-- deadlocking with it (bench/localemigration saw 40P01 without these).
-- Writes to these tables wait for the migration either way; reads of them
-- do not (SHARE ROW EXCLUSIVE).
LOCK TABLE pages, contents, content_blocks, drafts IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE search_documents IN ACCESS EXCLUSIVE MODE;

-- Back to one document per record and draft: the locales' documents are
-- derived (from translations and locale drafts), so dropping them loses
-- nothing; the triggers and pressroom_search_put are 20261201030000's.
DROP TRIGGER drafts_search_update ON drafts;
CREATE TRIGGER drafts_search_update AFTER UPDATE ON drafts FOR EACH ROW
    WHEN (OLD.event IS DISTINCT FROM NEW.event OR OLD.item_type IS DISTINCT FROM NEW.item_type OR OLD.item_id IS DISTINCT FROM NEW.item_id
        OR OLD.drafted -> 'title' IS DISTINCT FROM NEW.drafted -> 'title'
        OR OLD.drafted -> 'path' IS DISTINCT FROM NEW.drafted -> 'path'
        OR OLD.drafted -> 'keywords' IS DISTINCT FROM NEW.drafted -> 'keywords'
        OR OLD.drafted -> 'description' IS DISTINCT FROM NEW.drafted -> 'description'
        OR OLD.drafted -> 'body' IS DISTINCT FROM NEW.drafted -> 'body')
    EXECUTE FUNCTION pressroom_search_draft();
DROP TRIGGER content_blocks_search_update ON content_blocks;
CREATE TRIGGER content_blocks_search_update AFTER UPDATE ON content_blocks FOR EACH ROW
    WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('content-blocks');
DROP TRIGGER contents_search_update ON contents;
CREATE TRIGGER contents_search_update AFTER UPDATE ON contents FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('contents');
DROP TRIGGER pages_search_update ON pages;
CREATE TRIGGER pages_search_update AFTER UPDATE ON pages FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.path IS DISTINCT FROM NEW.path
        OR OLD.keywords IS DISTINCT FROM NEW.keywords OR OLD.description IS DISTINCT FROM NEW.description
        OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('pages');

DELETE FROM search_documents WHERE locale <> '';
ALTER TABLE search_documents DROP CONSTRAINT search_documents_pkey,
    ADD CONSTRAINT search_documents_pkey PRIMARY KEY (item_type, item_id, drafted);
ALTER TABLE search_documents DROP COLUMN covered, DROP COLUMN locale;

CREATE OR REPLACE FUNCTION pressroom_search_put(site uuid, typ text, id uuid, is_drafted boolean, is_live boolean, v tsvector) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF v IS NULL THEN
        DELETE FROM search_documents WHERE item_type = typ AND item_id = id AND drafted = is_drafted;
        RETURN;
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search) VALUES (site, typ, id, is_drafted, is_live, v)
    ON CONFLICT (item_type, item_id, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live;
END $$;

CREATE OR REPLACE FUNCTION pressroom_search_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
    is_live boolean := true;
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
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search)
    VALUES (NEW.site_id, TG_ARGV[0], NEW.id, false, is_live, v)
    ON CONFLICT (item_type, item_id, drafted) DO UPDATE SET search = EXCLUDED.search, live = EXCLUDED.live
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search OR search_documents.live IS DISTINCT FROM EXCLUDED.live;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pressroom_search_draft() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_documents WHERE item_type = OLD.item_type AND item_id = OLD.item_id AND drafted;
        RETURN NULL;
    END IF;
    IF NEW.event <> 'delete' THEN
        v := pressroom_draft_search(NEW.item_type, NEW.drafted);
    END IF;
    IF v IS NULL THEN -- a delete draft, or a type that is not searched
        DELETE FROM search_documents WHERE item_type = NEW.item_type AND item_id = NEW.item_id AND drafted;
        RETURN NULL;
    END IF;
    INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search)
    VALUES (NEW.site_id, NEW.item_type, NEW.item_id, true, false, v)
    ON CONFLICT (item_type, item_id, drafted) DO UPDATE SET search = EXCLUDED.search
        WHERE search_documents.search IS DISTINCT FROM EXCLUDED.search;
    RETURN NULL;
END $$;

DROP FUNCTION pressroom_locale_search(text, jsonb, text);
DROP FUNCTION pressroom_draft_translations(jsonb);
DROP FUNCTION pressroom_translated_locales(jsonb);
DROP FUNCTION pressroom_locale_config(text);
DO $$
DECLARE
    lang text;
BEGIN
    FOREACH lang IN ARRAY ARRAY['arabic', 'armenian', 'basque', 'catalan', 'danish', 'dutch', 'english', 'finnish',
        'french', 'german', 'greek', 'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'lithuanian', 'nepali',
        'norwegian', 'portuguese', 'romanian', 'russian', 'serbian', 'spanish', 'swedish', 'tamil', 'turkish', 'yiddish'] LOOP
        EXECUTE format('DROP TEXT SEARCH CONFIGURATION %I', 'pressroom_' || lang);
    END LOOP;
END $$;
DROP TEXT SEARCH CONFIGURATION pressroom_simple;
