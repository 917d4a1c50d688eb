DROP TRIGGER content_blocks_comments_gone ON content_blocks;
DROP TRIGGER contents_comments_gone ON contents;
DROP TRIGGER pages_comments_gone ON pages;
DROP FUNCTION comments_of_deleted_records();
DROP TRIGGER drafts_comments_gone ON drafts;
DROP FUNCTION comments_of_deleted_drafts();
