-- Full-text search (issue 32, docs/search.md). The searchable text of every
-- page, content, content block and asset, and the drafted values of every
-- pending draft, is kept as a tsvector in search_documents, written by
-- triggers on those tables: in the statement that writes the row, so the
-- index is maintained in the write's own transaction and never lags.
--
-- A side table rather than generated columns on the content tables: the
-- draft engine reads, snapshots and restores rows whole (to_jsonb(t),
-- jsonb_populate_recordset), and a generated column would ride along in
-- every read and version and could not be inserted back by a rollback.
-- The triggers skip the work when no searched value changed (a PATCH of a
-- block's position, a row's version moving on), and the GIN index's
-- pending list (fastupdate) keeps the index insert cheap.
--
-- Words are matched in the text search configuration pressroom: a copy of
-- english (PRESSROOM_SEARCH_LANGUAGE switches its stemmer at start,
-- models.ConfigureSearch) whose words pass through unaccent first, so é
-- matches e. to_tsvector(regconfig, text) is immutable; no immutable
-- wrapper around unaccent() is needed, since unaccent works here as a
-- filtering dictionary of the configuration, not as a function called in
-- an expression.
CREATE EXTENSION IF NOT EXISTS unaccent;
-- btree_gin: one GIN index on (site_id, item_type, search), so a site's
-- search never reads another site's postings.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE TEXT SEARCH CONFIGURATION pressroom (COPY = english);
ALTER TEXT SEARCH CONFIGURATION pressroom
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, english_stem;

-- The text of an HTML body: script and style elements and comments
-- dropped, tags replaced by spaces, the common entities and numeric
-- character references decoded. Immutable: it reads nothing but its
-- argument. Numeric references are decoded in one pass of at most 200
-- (a body of thousands of them is not text anyone searches).
CREATE FUNCTION pressroom_html_text(body text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    s text;
    m text[];
    n int := 0;
    cp int;
BEGIN
    IF strpos(body, '<') = 0 AND strpos(body, '&') = 0 THEN
        RETURN body; -- plain text: the common case, nothing to do
    END IF;
    s := regexp_replace(body, '<(script|style)\M[^>]*>.*?</\1\s*>', ' ', 'gis');
    s := regexp_replace(s, '<!--.*?-->', ' ', 'gs');
    s := regexp_replace(s, '<[^>]*>', ' ', 'g');
    IF strpos(s, '&') = 0 THEN
        RETURN s;
    END IF;
    s := replace(replace(replace(replace(replace(replace(replace(s,
        '&nbsp;', ' '), '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&apos;', ''''), '&#39;', ''''), '&mdash;', '—');
    s := replace(replace(replace(replace(s, '&ndash;', '–'), '&hellip;', '…'), '&rsquo;', ''''), '&lsquo;', '''');
    FOR m IN SELECT regexp_matches(s, '&#(x[0-9a-f]{1,6}|[0-9]{1,7});', 'gi') LOOP
        n := n + 1;
        EXIT WHEN n > 200;
        IF lower(left(m[1], 1)) = 'x' THEN
            cp := ('x' || lpad(substr(m[1], 2), 8, '0'))::bit(32)::int;
        ELSE
            cp := m[1]::int;
        END IF;
        IF cp BETWEEN 1 AND 1114111 AND cp NOT BETWEEN 55296 AND 57343 THEN
            s := replace(s, '&#' || m[1] || ';', chr(cp));
        END IF;
    END LOOP;
    RETURN replace(s, '&amp;', '&');
END $$;


-- The searchable text of a page: title (weight A), path and keywords (B),
-- description (C). A path's slashes and dashes separate words.
CREATE FUNCTION pressroom_page_search(title text, path text, keywords text, description text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT setweight(to_tsvector('pressroom', coalesce(title, '')), 'A')
    || setweight(to_tsvector('pressroom', translate(coalesce(path, ''), '/-_.', '    ')), 'B')
    || setweight(to_tsvector('pressroom', coalesce(keywords, '')), 'B')
    || setweight(to_tsvector('pressroom', coalesce(description, '')), 'C')
$$;

CREATE FUNCTION pressroom_title_search(title text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT setweight(to_tsvector('pressroom', coalesce(title, '')), 'A')
$$;

-- A block's body is body text (weight D: below every title).
CREATE FUNCTION pressroom_block_search(body text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT setweight(to_tsvector('pressroom', pressroom_html_text(coalesce(body, ''))), 'D')
$$;

-- An asset: title (A), file name (B; dots, dashes and underscores separate words).
CREATE FUNCTION pressroom_asset_search(title text, file_name text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT setweight(to_tsvector('pressroom', coalesce(title, '')), 'A')
    || setweight(to_tsvector('pressroom', translate(coalesce(file_name, ''), '/-_.', '    ')), 'B')
$$;

-- One row per record (drafted false: the row's own values, live or not
-- yet published; live tells which) and per pending create or update draft
-- (drafted true: its drafted values). A delete draft has none: the drafted
-- view of a record drafted for deletion shows its live values.
CREATE TABLE search_documents (
    site_id   uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    item_type text NOT NULL,
    item_id   uuid NOT NULL,
    drafted   boolean NOT NULL,
    live      boolean NOT NULL,
    search    tsvector NOT NULL,
    PRIMARY KEY (item_type, item_id, drafted)
);
CREATE INDEX search_documents_search_idx ON search_documents USING gin (site_id, item_type, search);

-- pressroom_search_put writes (or with a NULL vector removes) one document.
CREATE FUNCTION pressroom_search_put(site uuid, typ text, id uuid, is_drafted boolean, is_live boolean, v tsvector) RETURNS void
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

CREATE FUNCTION pressroom_search_row() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- UPDATE triggers fire only when a searched value or the publication
-- changed (WHEN), so a write that moves a row's version, position or
-- parent costs nothing here.
CREATE TRIGGER pages_search AFTER INSERT OR DELETE ON pages FOR EACH ROW EXECUTE FUNCTION pressroom_search_row('pages');
CREATE TRIGGER pages_search_update AFTER UPDATE ON pages FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.path IS DISTINCT FROM NEW.path
        OR OLD.keywords IS DISTINCT FROM NEW.keywords OR OLD.description IS DISTINCT FROM NEW.description
        OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('pages');
CREATE TRIGGER contents_search AFTER INSERT OR DELETE ON contents FOR EACH ROW EXECUTE FUNCTION pressroom_search_row('contents');
CREATE TRIGGER contents_search_update AFTER UPDATE ON contents FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('contents');
CREATE TRIGGER content_blocks_search AFTER INSERT OR DELETE ON content_blocks FOR EACH ROW EXECUTE FUNCTION pressroom_search_row('content-blocks');
CREATE TRIGGER content_blocks_search_update AFTER UPDATE ON content_blocks FOR EACH ROW
    WHEN (OLD.body IS DISTINCT FROM NEW.body OR OLD.published_at IS DISTINCT FROM NEW.published_at)
    EXECUTE FUNCTION pressroom_search_row('content-blocks');
CREATE TRIGGER assets_search AFTER INSERT OR DELETE ON assets FOR EACH ROW EXECUTE FUNCTION pressroom_search_row('assets');
CREATE TRIGGER assets_search_update AFTER UPDATE ON assets FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title) EXECUTE FUNCTION pressroom_search_row('assets');

-- An asset's file name is its image's.
CREATE FUNCTION pressroom_search_asset_image() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pressroom_search_put(a.site_id, 'assets', a.id, false, true, pressroom_asset_search(a.title, NEW.file_name))
        FROM assets a WHERE a.id = NEW.asset_id;
    RETURN NULL;
END $$;
CREATE TRIGGER asset_images_search AFTER INSERT OR UPDATE OF file_name ON asset_images FOR EACH ROW
    EXECUTE FUNCTION pressroom_search_asset_image();

-- A draft's drafted values (drafted holds the item's full drafted state,
-- keyed by column).
CREATE FUNCTION pressroom_draft_search(typ text, drafted jsonb) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE typ
    WHEN 'pages' THEN pressroom_page_search(drafted ->> 'title', drafted ->> 'path', drafted ->> 'keywords', drafted ->> 'description')
    WHEN 'contents' THEN pressroom_title_search(drafted ->> 'title')
    WHEN 'content-blocks' THEN pressroom_block_search(drafted ->> 'body')
END
$$;

CREATE FUNCTION pressroom_search_draft() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- The documents of what exists already.
INSERT INTO search_documents (site_id, item_type, item_id, drafted, live, search)
SELECT site_id, 'pages', id, false, published_at IS NOT NULL, pressroom_page_search(title, path, keywords, description) FROM pages
UNION ALL SELECT site_id, 'contents', id, false, published_at IS NOT NULL, pressroom_title_search(title) FROM contents
UNION ALL SELECT site_id, 'content-blocks', id, false, published_at IS NOT NULL, pressroom_block_search(body) FROM content_blocks
UNION ALL SELECT a.site_id, 'assets', a.id, false, true, pressroom_asset_search(a.title, i.file_name) FROM assets a LEFT JOIN asset_images i ON i.asset_id = a.id
UNION ALL SELECT site_id, item_type, item_id, true, false, pressroom_draft_search(item_type, drafted) FROM drafts WHERE event <> 'delete';
