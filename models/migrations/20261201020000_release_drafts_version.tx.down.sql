DROP TRIGGER drafts_release_delete ON drafts;
DROP TRIGGER drafts_release_update ON drafts;
DROP TRIGGER drafts_release_insert ON drafts;
DROP FUNCTION pressroom_release_drafts_moved();
ALTER TABLE releases DROP COLUMN drafts_version;
