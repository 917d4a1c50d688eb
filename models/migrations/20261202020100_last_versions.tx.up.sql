-- filter[user] (who last changed a record, docs/api-conventions.md) read
-- the user's versions in the site and probed each for a newer one: work
-- proportional to the user's versions, 45-50 ms for a user who last
-- changed 9,900 of 10,000 pages. last_versions holds each record's
-- newest version (its user), kept by triggers on versions in the
-- statement that writes or deletes one, so filter[user] is one range of
-- last_versions_user_idx: the records the user last changed, nothing more.
CREATE TABLE last_versions (
    item_type  text NOT NULL,
    item_id    uuid NOT NULL,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    version_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    -- As versions.user_id: a deleted user's records keep no author.
    user_id    uuid REFERENCES users (id) ON DELETE SET NULL,
    PRIMARY KEY (item_type, item_id)
);
CREATE INDEX last_versions_user_idx ON last_versions (site_id, item_type, user_id, item_id);

INSERT INTO last_versions (item_type, item_id, site_id, version_id, created_at, user_id)
SELECT DISTINCT ON (item_type, item_id) item_type, item_id, site_id, id, created_at, user_id
  FROM versions ORDER BY item_type, item_id, created_at DESC, id DESC;

-- A new version is its record's newest unless one newer is there (the
-- order of versions: created_at, then id).
CREATE FUNCTION pressroom_last_version_put() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO last_versions AS l (item_type, item_id, site_id, version_id, created_at, user_id)
    VALUES (NEW.item_type, NEW.item_id, NEW.site_id, NEW.id, NEW.created_at, NEW.user_id)
    ON CONFLICT (item_type, item_id) DO UPDATE
        SET site_id = EXCLUDED.site_id, version_id = EXCLUDED.version_id, created_at = EXCLUDED.created_at, user_id = EXCLUDED.user_id
        WHERE (EXCLUDED.created_at, EXCLUDED.version_id) >= (l.created_at, l.version_id);
    RETURN NULL;
END $$;
-- (A user's deletion sets versions.user_id NULL, and last_versions.user_id
-- by its own foreign key.)
CREATE TRIGGER versions_last_put AFTER INSERT ON versions
    FOR EACH ROW EXECUTE FUNCTION pressroom_last_version_put();

-- Deleted versions (the history's retention, the trash's purge): a record
-- whose newest went gets its newest remaining one, or none.
CREATE FUNCTION pressroom_last_version_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM last_versions l USING gone g
     WHERE l.item_type = g.item_type AND l.item_id = g.item_id AND l.version_id = g.id;
    INSERT INTO last_versions (item_type, item_id, site_id, version_id, created_at, user_id)
    SELECT DISTINCT ON (v.item_type, v.item_id) v.item_type, v.item_id, v.site_id, v.id, v.created_at, v.user_id
      FROM versions v
     WHERE (v.item_type, v.item_id) IN (SELECT item_type, item_id FROM gone)
       AND NOT EXISTS (SELECT 1 FROM last_versions l WHERE l.item_type = v.item_type AND l.item_id = v.item_id)
     ORDER BY v.item_type, v.item_id, v.created_at DESC, v.id DESC
    ON CONFLICT (item_type, item_id) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER versions_last_gone AFTER DELETE ON versions REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_last_version_gone();
