-- Back to 20261129040000_search's triggers: the draft's change test in the
-- function body and the upsert through pressroom_search_put.
DROP TRIGGER drafts_search_update ON drafts;
DROP TRIGGER drafts_search ON drafts;

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
    PERFORM pressroom_search_put(NEW.site_id, TG_ARGV[0], NEW.id, false, is_live, v);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pressroom_search_draft() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_documents WHERE item_type = OLD.item_type AND item_id = OLD.item_id AND drafted;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.event = NEW.event AND OLD.item_id = NEW.item_id
        AND OLD.drafted ->> 'title' IS NOT DISTINCT FROM NEW.drafted ->> 'title'
        AND OLD.drafted ->> 'path' IS NOT DISTINCT FROM NEW.drafted ->> 'path'
        AND OLD.drafted ->> 'keywords' IS NOT DISTINCT FROM NEW.drafted ->> 'keywords'
        AND OLD.drafted ->> 'description' IS NOT DISTINCT FROM NEW.drafted ->> 'description'
        AND OLD.drafted ->> 'body' IS NOT DISTINCT FROM NEW.drafted ->> 'body' THEN
        RETURN NULL; -- nothing searched changed (a position, a parent)
    END IF;
    IF NEW.event = 'delete' THEN
        PERFORM pressroom_search_put(NEW.site_id, NEW.item_type, NEW.item_id, true, false, NULL);
    ELSE
        PERFORM pressroom_search_put(NEW.site_id, NEW.item_type, NEW.item_id, true, false, pressroom_draft_search(NEW.item_type, NEW.drafted));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER drafts_search AFTER INSERT OR UPDATE OR DELETE ON drafts FOR EACH ROW EXECUTE FUNCTION pressroom_search_draft();
