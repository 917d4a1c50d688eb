-- Comments on records (issue 30 §3, docs/releases.md "Comments"): a note on
-- a page, content, content block, draft or release of the site, by its
-- author, optionally resolved. item_key ("type:id") is what
-- GET /comments?filter[item]=type:id compares.
CREATE TABLE comments (
    id         uuid PRIMARY KEY,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    item_type  text NOT NULL CHECK (item_type IN ('pages', 'contents', 'content-blocks', 'drafts', 'releases')),
    item_id    uuid NOT NULL,
    item_key   text GENERATED ALWAYS AS (item_type || ':' || item_id::text) STORED,
    user_id    uuid REFERENCES users (id) ON DELETE SET NULL,
    body       text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 10000),
    resolved   boolean NOT NULL DEFAULT false,
    version    integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX comments_item_idx ON comments (site_id, item_key, created_at, id);
CREATE INDEX comments_site_idx ON comments (site_id, created_at, id);
