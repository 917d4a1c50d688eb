DROP INDEX IF EXISTS versions_state_content_idx;
DROP INDEX IF EXISTS versions_state_page_idx;
DROP INDEX IF EXISTS versions_state_parent_idx;
DROP INDEX IF EXISTS versions_created_idx;
DROP INDEX IF EXISTS versions_trash_idx;
