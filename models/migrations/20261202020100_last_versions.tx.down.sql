DROP TRIGGER versions_last_gone ON versions;
DROP TRIGGER versions_last_put ON versions;
DROP FUNCTION pressroom_last_version_gone();
DROP FUNCTION pressroom_last_version_put();
DROP TABLE last_versions;
