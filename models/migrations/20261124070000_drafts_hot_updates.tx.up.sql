-- Writes update a draft in place (each PATCH of a drafted item rewrites
-- its drafted and object_changes) and move the item's row version on.
-- Postgres updates a row without touching its indexes (a HOT update) only
-- when no indexed column changes and the new version fits in the same
-- block. The expression indexes on drafted's parent keys made every draft
-- update a non-HOT one: drafted is a column they read, so each update
-- inserted into all six indexes of drafts (four for a page's draft) and
-- wrote their WAL. The parent key now lives in a stored generated column,
-- which changes only when a draft moves its item; its one index replaces
-- the three (a draft's parent key is at most one of parent_id, page_id,
-- content_id, by its item_type).
ALTER TABLE drafts ADD COLUMN drafted_parent uuid GENERATED ALWAYS AS (
    CASE item_type
        WHEN 'pages' THEN (drafted ->> 'parent_id')::uuid
        WHEN 'contents' THEN (drafted ->> 'page_id')::uuid
        WHEN 'content-blocks' THEN (drafted ->> 'content_id')::uuid
    END) STORED;
DROP INDEX drafts_drafted_parent_idx;
DROP INDEX drafts_drafted_page_idx;
DROP INDEX drafts_drafted_content_idx;
CREATE INDEX drafts_drafted_parent_ref_idx ON drafts (drafted_parent, item_type) WHERE drafted_parent IS NOT NULL;

-- Room in each block for the new versions of its rows, so that HOT
-- updates find space next to the old ones (pruning reclaims the dead ones
-- later): a draft is rewritten at every write of its item, a row's version
-- moves on at every write. New blocks only; existing ones fill as before.
ALTER TABLE drafts SET (fillfactor = 70);
ALTER TABLE pages SET (fillfactor = 90);
ALTER TABLE contents SET (fillfactor = 90);
ALTER TABLE content_blocks SET (fillfactor = 90);
