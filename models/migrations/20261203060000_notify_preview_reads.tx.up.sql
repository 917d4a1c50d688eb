-- A release's preview of a record (preview-release) depends, besides the
-- rows of pages, contents and content_blocks (migration 20261202050000),
-- on the site's drafts (the release's own, staged by drafts.release_id,
-- and those its closure pulls in) and on the release's row (its status:
-- a published or cancelled release previews nothing). Every change to
-- them NOTIFYs the site on pressroom_reads, so each replica's read cache
-- (docs/caching.md) drops the site's documents, previews among them. A
-- PATCH of a published record already notified its site through the row
-- it moves; Postgres folds the equal payload of one transaction into one.
CREATE TRIGGER drafts_notify_reads_ins AFTER INSERT ON drafts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER drafts_notify_reads_upd AFTER UPDATE ON drafts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER drafts_notify_reads_del AFTER DELETE ON drafts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER releases_notify_reads_upd AFTER UPDATE ON releases REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER releases_notify_reads_del AFTER DELETE ON releases REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
