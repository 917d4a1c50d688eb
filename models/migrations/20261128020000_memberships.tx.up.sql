-- A user may belong to several sites, each with one role (models/roles.go:
-- the built-in roles and their permissions; docs/auth.md has the table).
-- path_prefix narrows an author's or editor's rights to the pages under it
-- (and their contents and blocks); NULL is the whole site.
--
-- Every authenticated request reads its membership in the same statement
-- as its token's row (models.AccessTokenMember), by the unique index
-- (user_id, site_id): a role change or a removal holds on the next request.
CREATE TABLE memberships (
    id          uuid PRIMARY KEY,
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('viewer', 'author', 'editor', 'admin')),
    path_prefix text CHECK (path_prefix ~ '^/(.*/)?$' AND length(path_prefix) <= 2048),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX memberships_user_site_key ON memberships (user_id, site_id);
CREATE INDEX memberships_site_idx ON memberships (site_id, created_at);

-- Every user so far could do everything on their site: admin.
INSERT INTO memberships (id, site_id, user_id, role, created_at, updated_at)
SELECT gen_random_uuid(), site_id, id, 'admin', created_at, created_at FROM users;
