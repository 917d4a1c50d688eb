-- A release's drafts_version (20261201020000) moved in a row of releases,
-- so a write to a staged draft (the draft's row locked first) then waited
-- for the release's row, while a review, a staging or a cancel locks the
-- release's row first and then its drafts: opposite orders, and under
-- concurrent edits and reviews Postgres aborted them as deadlocks faster
-- than runTx's retries could absorb (e2e TestReviewUnderConcurrentEdits:
-- 500s). The counter now lives in a row of its own, made with its release
-- (so the drafts' trigger only updates it: no foreign key check, no lock
-- on the release), and locked last by everyone.
CREATE TABLE release_draft_versions (
    release_id uuid PRIMARY KEY REFERENCES releases (id) ON DELETE CASCADE,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    version    bigint NOT NULL DEFAULT 0
);
INSERT INTO release_draft_versions (release_id, site_id, version) SELECT id, site_id, drafts_version FROM releases;
ALTER TABLE releases DROP COLUMN drafts_version;

CREATE FUNCTION pressroom_release_versions_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO release_draft_versions (release_id, site_id) SELECT id, site_id FROM new_releases;
    RETURN NULL;
END $$;
CREATE TRIGGER releases_draft_versions AFTER INSERT ON releases REFERENCING NEW TABLE AS new_releases
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_release_versions_row();

CREATE OR REPLACE FUNCTION pressroom_release_drafts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
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
