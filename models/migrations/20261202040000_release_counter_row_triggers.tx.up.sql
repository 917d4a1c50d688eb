-- The release drafts counter (release_draft_versions, 20261201070000) was
-- moved by three statement triggers with transition tables, which run on
-- every write of every draft: a PATCH of a page (its draft's INSERT ... ON
-- CONFLICT DO UPDATE fires both the INSERT and the UPDATE one) copied the
-- rows into two transition tables, entered PL/pgSQL twice and ran two
-- UPDATEs that found no release: pg_stat_user_functions in bench/http's
-- PATCH shapes (issue 34) measured 62.6 µs of self time a call, two calls
-- per PATCH, for drafts staged in no release, about a tenth of the write's
-- Postgres time. Row triggers with a WHEN clause cost a draft in no
-- release nothing (the condition is evaluated without entering
-- PL/pgSQL); a draft staged in a release moves its release's counter once
-- per row written, in the same transaction and, as before, at the end of
-- the statement, after the drafts' own locks (the counter is still locked
-- last by everyone).
DROP TRIGGER drafts_release_insert ON drafts;
DROP TRIGGER drafts_release_update ON drafts;
DROP TRIGGER drafts_release_delete ON drafts;
DROP FUNCTION pressroom_release_drafts_moved();

CREATE FUNCTION pressroom_release_draft_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE release_draft_versions SET version = version + 1 WHERE release_id = NEW.release_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE release_draft_versions SET version = version + 1 WHERE release_id = OLD.release_id;
    ELSE -- staged, unstaged, moved between releases, or edited in one
        UPDATE release_draft_versions SET version = version + 1
        WHERE release_id = OLD.release_id OR release_id = NEW.release_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER drafts_release_insert AFTER INSERT ON drafts FOR EACH ROW
    WHEN (NEW.release_id IS NOT NULL) EXECUTE FUNCTION pressroom_release_draft_moved();
CREATE TRIGGER drafts_release_update AFTER UPDATE ON drafts FOR EACH ROW
    WHEN (OLD.release_id IS NOT NULL OR NEW.release_id IS NOT NULL) EXECUTE FUNCTION pressroom_release_draft_moved();
CREATE TRIGGER drafts_release_delete AFTER DELETE ON drafts FOR EACH ROW
    WHEN (OLD.release_id IS NOT NULL) EXECUTE FUNCTION pressroom_release_draft_moved();
