-- Review before publishing (issue 30 §1, docs/releases.md "Review"): how
-- many valid approvals a site's releases need, and the requests and
-- verdicts of a release. An approval records the meta.version of every
-- draft staged in the release when it was given (drafts); it is stale when
-- that set or any of those versions no longer matches the release's
-- drafts (compared when read, so every edit of a draft, by any code path,
-- lapses it in the edit's own transaction), or when a draft was staged or
-- unstaged since (stale, set in the staging transaction).
ALTER TABLE sites ADD COLUMN release_approvals integer NOT NULL DEFAULT 0
    CHECK (release_approvals BETWEEN 0 AND 5);

CREATE TABLE release_reviews (
    id          uuid PRIMARY KEY,
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    release_id  uuid NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    user_id     uuid REFERENCES users (id) ON DELETE SET NULL,
    verdict     text NOT NULL CHECK (verdict IN ('requested', 'approved', 'changes-requested')),
    comment     text CHECK (char_length(comment) <= 10000),
    drafts      jsonb NOT NULL DEFAULT '{}',
    stale       boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX release_reviews_release_idx ON release_reviews (release_id, created_at, id);
CREATE INDEX release_reviews_site_idx ON release_reviews (site_id);
