-- A release's preview (issue 29, docs/releases.md "Preview") is kept by the
-- API while the release's drafts are as they were. drafts_version moves on
-- every insert, update and delete of a draft staged in the release (before
-- or after the change: staging, unstaging, editing, publishing, reverting),
-- in the writing transaction, so a read that begins after the write commits
-- sees it moved, on every replica, by reading one row. A draft in no
-- release moves no shared row: its writes pay a statement trigger that
-- finds no release in the changed rows, nothing more.
ALTER TABLE releases ADD COLUMN drafts_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION pressroom_release_drafts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Once per statement: publishing 1,000 drafts moves the release once.
    IF TG_OP = 'INSERT' THEN
        UPDATE releases SET drafts_version = drafts_version + 1
        WHERE id IN (SELECT release_id FROM new_rows WHERE release_id IS NOT NULL);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE releases SET drafts_version = drafts_version + 1
        WHERE id IN (SELECT release_id FROM old_rows WHERE release_id IS NOT NULL);
    ELSE
        UPDATE releases SET drafts_version = drafts_version + 1
        WHERE id IN (SELECT release_id FROM old_rows WHERE release_id IS NOT NULL
            UNION SELECT release_id FROM new_rows WHERE release_id IS NOT NULL);
    END IF;
    RETURN NULL;
END $$;

-- Transition tables take one event per trigger.
CREATE TRIGGER drafts_release_insert AFTER INSERT ON drafts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
CREATE TRIGGER drafts_release_update AFTER UPDATE ON drafts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
CREATE TRIGGER drafts_release_delete AFTER DELETE ON drafts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
