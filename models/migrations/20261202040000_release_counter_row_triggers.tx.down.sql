DROP TRIGGER drafts_release_insert ON drafts;
DROP TRIGGER drafts_release_update ON drafts;
DROP TRIGGER drafts_release_delete ON drafts;
DROP FUNCTION pressroom_release_draft_moved();

CREATE FUNCTION pressroom_release_drafts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Once per statement: publishing 1,000 drafts moves the release once.
    IF TG_OP = 'INSERT' THEN
        UPDATE release_draft_versions SET version = version + 1
        WHERE release_id IN (SELECT release_id FROM new_rows WHERE release_id IS NOT NULL);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE release_draft_versions SET version = version + 1
        WHERE release_id IN (SELECT release_id FROM old_rows WHERE release_id IS NOT NULL);
    ELSE
        UPDATE release_draft_versions SET version = version + 1
        WHERE release_id IN (SELECT release_id FROM old_rows WHERE release_id IS NOT NULL
            UNION SELECT release_id FROM new_rows WHERE release_id IS NOT NULL);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER drafts_release_insert AFTER INSERT ON drafts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
CREATE TRIGGER drafts_release_update AFTER UPDATE ON drafts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
CREATE TRIGGER drafts_release_delete AFTER DELETE ON drafts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_drafts_moved();
