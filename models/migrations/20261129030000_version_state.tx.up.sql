-- Issue 31, a record's history: each version keeps the record's row right
-- after it (state; null after a delete), so a point in time reads without
-- replaying changes, and the history of one record is read newest first
-- by an index.
ALTER TABLE versions ADD COLUMN state jsonb;

CREATE INDEX versions_item_history_idx ON versions (item_type, item_id, created_at DESC, id DESC);

-- Old versions: the row after a version is the row before the item's next
-- version (its snapshot), or, for the newest, the live row. A descendant
-- page's path moved by its parent's publish changes without a version of
-- its own, so an old state may carry a path older than the live one.
UPDATE versions v SET state = coalesce(
    (SELECT n.snapshot FROM versions n
      WHERE n.item_type = v.item_type AND n.item_id = v.item_id AND (n.created_at, n.id) > (v.created_at, v.id)
      ORDER BY n.created_at, n.id LIMIT 1),
    CASE v.item_type
      WHEN 'pages' THEN (SELECT to_jsonb(t) FROM pages t WHERE t.id = v.item_id)
      WHEN 'contents' THEN (SELECT to_jsonb(t) FROM contents t WHERE t.id = v.item_id)
      WHEN 'content-blocks' THEN (SELECT to_jsonb(t) FROM content_blocks t WHERE t.id = v.item_id)
    END)
WHERE v.event <> 'delete';
