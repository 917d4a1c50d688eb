-- Managing the team (docs/auth.md, "Managing the team"): an admin adds a
-- member by e-mail; a new user gets a one-time password setup link.
--
-- Only the SHA-256 of a setup token is stored; a setup is spent once
-- (used_at) and expires (expires_at, 72 hours after it was made).
CREATE TABLE password_setups (
    id         uuid PRIMARY KEY,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_setups_user_idx ON password_setups (user_id);

-- The last admin of a site stays one: a removal or demotion that would
-- leave a site without an admin fails in the database too, whatever wrote
-- it. models.ChangeMembership locks the site's admins first, so two admins
-- demoting each other at once cannot both pass; this trigger is the rule
-- itself. A site or user being deleted (the cascades) takes its
-- memberships with it.
CREATE FUNCTION memberships_keep_an_admin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.role = 'admin' AND (TG_OP = 'DELETE' OR NEW.role <> 'admin')
       AND EXISTS (SELECT 1 FROM sites WHERE id = OLD.site_id)
       AND EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id)
       AND NOT EXISTS (SELECT 1 FROM memberships WHERE site_id = OLD.site_id AND role = 'admin' AND id <> OLD.id) THEN
        RAISE EXCEPTION 'site % would have no admin', OLD.site_id USING ERRCODE = 'check_violation', CONSTRAINT = 'memberships_last_admin';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER memberships_last_admin AFTER UPDATE OR DELETE ON memberships
    DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION memberships_keep_an_admin();
