-- The search index's cost on a write (issue 32: under 10 % of a PATCH).
-- A PATCH of a live page writes its draft (INSERT or UPDATE of drafts)
-- and moves the page row's version on (an UPDATE of pages that the
-- pages_search_update trigger's WHEN clause already skips). So the draft
-- trigger is the one that runs on every edit; this migration makes it and
-- the row trigger cheaper without moving the index out of the write's
-- transaction:
--
--   - the draft's "did a searched value change" test moves from the
--     function body into the UPDATE trigger's WHEN clause, so an update of
--     a draft that changes none (a block's position, a parent, the
--     revision a publish holds it in, the version) never enters PL/pgSQL;
--   - the upsert is written inline in each trigger function instead of
--     through pressroom_search_put, a second PL/pgSQL call (its own
--     function entry and a plan per statement) on every write.
--
-- pg_stat_user_functions (track_functions = all) on a title PATCH's
-- statement showed the trigger at about 0.16 ms a call, half of it in
-- the nested upsert function's call; the vector itself (four short
-- to_tsvector calls) is the smaller part.

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

-- A draft's document: its drafted values (none for a delete draft, whose
-- record's drafted view shows its live values).
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

DROP TRIGGER drafts_search ON drafts;
CREATE TRIGGER drafts_search AFTER INSERT OR DELETE ON drafts FOR EACH ROW EXECUTE FUNCTION pressroom_search_draft();
-- The searched keys of drafted (pressroom_draft_search): an update that
-- changes none of them, nor the draft's event or item, changes no document.
CREATE TRIGGER drafts_search_update AFTER UPDATE ON drafts FOR EACH ROW
    WHEN (OLD.event IS DISTINCT FROM NEW.event OR OLD.item_type IS DISTINCT FROM NEW.item_type OR OLD.item_id IS DISTINCT FROM NEW.item_id
        OR OLD.drafted -> 'title' IS DISTINCT FROM NEW.drafted -> 'title'
        OR OLD.drafted -> 'path' IS DISTINCT FROM NEW.drafted -> 'path'
        OR OLD.drafted -> 'keywords' IS DISTINCT FROM NEW.drafted -> 'keywords'
        OR OLD.drafted -> 'description' IS DISTINCT FROM NEW.drafted -> 'description'
        OR OLD.drafted -> 'body' IS DISTINCT FROM NEW.drafted -> 'body')
    EXECUTE FUNCTION pressroom_search_draft();
