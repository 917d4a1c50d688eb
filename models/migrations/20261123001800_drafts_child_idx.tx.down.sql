DROP INDEX drafts_drafted_content_idx;
DROP INDEX drafts_drafted_page_idx;
DROP INDEX drafts_drafted_parent_idx;
