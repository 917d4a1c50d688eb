\timing on
BEGIN;
ALTER TABLE search_documents DROP CONSTRAINT search_documents_pkey, ADD CONSTRAINT search_documents_pkey PRIMARY KEY USING INDEX search_documents_locale_key;
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
COMMIT;
