-- Issue 31, the trash and the bounded history (docs/history.md).

-- The trash: a record's newest version a delete. Lists the site's trashed
-- records of a kind, the latest first, and finds those past the trash
-- retention.
CREATE INDEX versions_trash_idx ON versions (site_id, item_type, created_at DESC, id DESC) WHERE event = 'delete';

-- The version retention walks the versions oldest first.
CREATE INDEX versions_created_idx ON versions (created_at);

-- drafts.ChildrenAsOf: the versions whose state named one of the given
-- parents (a restore of a deleted page brings back its subpages and
-- contents, a content its blocks). Its query names the column and the
-- kind literally, so the planner matches these expressions and predicates.
CREATE INDEX versions_state_parent_idx ON versions (site_id, (state->>'parent_id')) WHERE item_type = 'pages';
CREATE INDEX versions_state_page_idx ON versions (site_id, (state->>'page_id')) WHERE item_type = 'contents';
CREATE INDEX versions_state_content_idx ON versions (site_id, (state->>'content_id')) WHERE item_type = 'content-blocks';
