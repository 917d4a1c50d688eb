ALTER TABLE releases ADD COLUMN drafts_version bigint NOT NULL DEFAULT 0;
UPDATE releases r SET drafts_version = v.version FROM release_draft_versions v WHERE v.release_id = r.id;
DROP TRIGGER releases_draft_versions ON releases;
DROP FUNCTION pressroom_release_versions_row();
CREATE OR REPLACE FUNCTION pressroom_release_drafts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
DROP TABLE release_draft_versions;
