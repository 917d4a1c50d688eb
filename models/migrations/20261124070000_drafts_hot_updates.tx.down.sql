ALTER TABLE content_blocks RESET (fillfactor);
ALTER TABLE contents RESET (fillfactor);
ALTER TABLE pages RESET (fillfactor);
ALTER TABLE drafts RESET (fillfactor);
DROP INDEX drafts_drafted_parent_ref_idx;
ALTER TABLE drafts DROP COLUMN drafted_parent;
CREATE INDEX drafts_drafted_parent_idx ON drafts (((drafted ->> 'parent_id')::uuid)) WHERE item_type = 'pages';
CREATE INDEX drafts_drafted_page_idx ON drafts (((drafted ->> 'page_id')::uuid)) WHERE item_type = 'contents';
CREATE INDEX drafts_drafted_content_idx ON drafts (((drafted ->> 'content_id')::uuid)) WHERE item_type = 'content-blocks';
