-- One live page per path in a site (issue 24): a site cannot serve two
-- pages at one URL. Publishing moves whole subtrees in one statement and
-- may swap two pages' paths in one revision, so the rule is checked at
-- commit (DEFERRABLE INITIALLY DEFERRED), which a unique index cannot be;
-- an exclusion constraint with = on both columns is the same rule,
-- deferrable and partial (only live pages: a created page is inserted
-- with published_at NULL and takes its path when its create publishes).
DO $$
DECLARE dup text;
BEGIN
    SELECT string_agg(format('site %s path %s (pages %s)', site_id, path, ids), '; ')
      INTO dup
      FROM (SELECT site_id, path, string_agg(id::text, ', ') AS ids
              FROM pages WHERE published_at IS NOT NULL
             GROUP BY site_id, path HAVING count(*) > 1) d;
    IF dup IS NOT NULL THEN
        RAISE EXCEPTION 'live pages share a path: %', dup
            USING HINT = 'Draft a new slug for all but one page of each path, publish those drafts, then migrate again.';
    END IF;
END $$;

ALTER TABLE pages ADD CONSTRAINT pages_live_path_excl
    EXCLUDE USING btree (site_id WITH =, path WITH =) WHERE (published_at IS NOT NULL)
    DEFERRABLE INITIALLY DEFERRED;

-- The write-time check (drafts.PageAt) finds a page's siblings by
-- parent and slug.
CREATE INDEX pages_site_parent_slug_idx ON pages (site_id, parent_id, slug);
