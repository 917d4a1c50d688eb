-- Drafts that move a record under another (a drafted parent_id, page_id or
-- content_id): deleting a record finds them through these indexes
-- (drafts.Engine.deleteTree) instead of reading every draft of the site.
CREATE INDEX drafts_drafted_parent_idx ON drafts (((drafted ->> 'parent_id')::uuid)) WHERE item_type = 'pages';
CREATE INDEX drafts_drafted_page_idx ON drafts (((drafted ->> 'page_id')::uuid)) WHERE item_type = 'contents';
CREATE INDEX drafts_drafted_content_idx ON drafts (((drafted ->> 'content_id')::uuid)) WHERE item_type = 'content-blocks';
