DROP TRIGGER memberships_last_admin ON memberships;
DROP FUNCTION memberships_keep_an_admin();
DROP TABLE password_setups;
