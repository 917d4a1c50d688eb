-- Releases (issue 29, docs/releases.md): a named set of drafts staged to be
-- previewed and published as one. A draft is in at most one release
-- (drafts.release_id); cancelling a release unstages its drafts, publishing
-- it consumes them as any revision does. The statuses in-review and
-- approved belong to the review step (issue 30) and are allowed here so
-- that its migration need not rewrite the check.
CREATE TABLE releases (
    id          uuid PRIMARY KEY,
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    title       text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    description text CHECK (char_length(description) <= 10000),
    status      text NOT NULL DEFAULT 'open' CHECK (status IN
                    ('open', 'in-review', 'approved', 'publishing', 'published', 'failed', 'cancelled')),
    user_id     uuid REFERENCES users (id) ON DELETE SET NULL,
    revision_id uuid REFERENCES revisions (id) ON DELETE SET NULL,
    version     integer NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX releases_site_idx ON releases (site_id, created_at, id);

-- The release a draft is staged in (NULL: none).
ALTER TABLE drafts ADD COLUMN release_id uuid REFERENCES releases (id) ON DELETE SET NULL;
CREATE INDEX drafts_release_idx ON drafts (release_id) WHERE release_id IS NOT NULL;

-- The release a revision publishes (NULL: a revision of listed drafts).
ALTER TABLE revisions ADD COLUMN release_id uuid REFERENCES releases (id) ON DELETE SET NULL;
CREATE INDEX revisions_release_idx ON revisions (release_id) WHERE release_id IS NOT NULL;
