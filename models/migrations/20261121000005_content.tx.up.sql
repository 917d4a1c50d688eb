-- Draftable content: pages, contents, content blocks. A row is live once
-- published_at is set; a created row is inserted at once with published_at
-- NULL and stays invisible to live reads until its create draft is
-- published. Foreign keys between them are deferred to commit, so one
-- publishing transaction may apply drafts in any order (records that point
-- at each other included).
CREATE TABLE pages (
    id                       uuid PRIMARY KEY,
    site_id                  uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    parent_id                uuid REFERENCES pages (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    layout_id                uuid REFERENCES layouts (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
    page_type                text NOT NULL CHECK (page_type IN ('home', 'page', 'not_found', 'error', 'search')),
    slug                     text NOT NULL,
    path                     text NOT NULL,
    title                    text NOT NULL,
    description              text,
    keywords                 text,
    search_engine_indexable  boolean NOT NULL DEFAULT true,
    search_engine_followable boolean NOT NULL DEFAULT true,
    canonical_url            text,
    published_at             timestamptz,
    trashed_at               timestamptz,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    version                  integer NOT NULL DEFAULT 1
);
CREATE INDEX pages_site_idx ON pages (site_id, path);
CREATE INDEX pages_parent_idx ON pages (parent_id);

CREATE TABLE contents (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    page_id      uuid NOT NULL REFERENCES pages (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    title        text NOT NULL,
    position     integer NOT NULL DEFAULT 0,
    published_at timestamptz,
    trashed_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    version      integer NOT NULL DEFAULT 1
);
CREATE INDEX contents_page_idx ON contents (page_id);
CREATE INDEX contents_site_idx ON contents (site_id);

CREATE TABLE content_blocks (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    content_id   uuid NOT NULL REFERENCES contents (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    asset_id     uuid REFERENCES assets (id) ON DELETE SET NULL,
    var_name     text NOT NULL,
    data_type    text NOT NULL CHECK (data_type IN ('text', 'html', 'image', 'link', 'markdown')),
    body         text NOT NULL DEFAULT '',
    position     integer NOT NULL DEFAULT 0,
    published_at timestamptz,
    trashed_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    version      integer NOT NULL DEFAULT 1
);
CREATE INDEX content_blocks_content_idx ON content_blocks (content_id);
CREATE INDEX content_blocks_site_idx ON content_blocks (site_id);

-- Revisions publish drafts; a draft in an in-flight revision carries its id.
CREATE TABLE revisions (
    id              uuid PRIMARY KEY,
    site_id         uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id         uuid REFERENCES users (id) ON DELETE SET NULL,
    comments        text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('publishing', 'published', 'failed')),
    draft_ids       uuid[] NOT NULL,
    versions_count  integer NOT NULL DEFAULT 0,
    error_message   text,
    idempotency_key text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX revisions_idempotency_idx ON revisions (site_id, user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX revisions_site_idx ON revisions (site_id, created_at);

-- One pending draft per item. drafted holds the item's full drafted state,
-- keyed by column, so reads overlay it on the live row.
CREATE TABLE drafts (
    id             uuid PRIMARY KEY,
    site_id        uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    item_type      text NOT NULL CHECK (item_type IN ('pages', 'contents', 'content-blocks')),
    item_id        uuid NOT NULL,
    event          text NOT NULL CHECK (event IN ('create', 'update', 'delete')),
    drafted        jsonb NOT NULL,
    object_changes jsonb NOT NULL,
    user_id        uuid REFERENCES users (id) ON DELETE SET NULL,
    revision_id    uuid REFERENCES revisions (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    version        integer NOT NULL DEFAULT 1,
    UNIQUE (item_type, item_id)
);
CREATE INDEX drafts_site_idx ON drafts (site_id, created_at);

-- One version per published draft: what changed, and the row before.
CREATE TABLE versions (
    id             uuid PRIMARY KEY,
    site_id        uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    revision_id    uuid NOT NULL REFERENCES revisions (id) ON DELETE CASCADE,
    item_type      text NOT NULL,
    item_id        uuid NOT NULL,
    event          text NOT NULL,
    object_changes jsonb NOT NULL,
    snapshot       jsonb,
    user_id        uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX versions_revision_idx ON versions (revision_id, created_at);
CREATE INDEX versions_item_idx ON versions (item_type, item_id);

-- Links from content-block bodies to pages and assets: for live bodies
-- (draft_id NULL) and for drafted bodies (draft_id set).
CREATE TABLE hyperlinks (
    id          uuid PRIMARY KEY,
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    linkable_id uuid NOT NULL REFERENCES content_blocks (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    draft_id    uuid REFERENCES drafts (id) ON DELETE CASCADE,
    linked_type text NOT NULL CHECK (linked_type IN ('pages', 'assets')),
    linked_id   uuid NOT NULL,
    href        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hyperlinks_linked_idx ON hyperlinks (linked_type, linked_id);
CREATE INDEX hyperlinks_linkable_idx ON hyperlinks (linkable_id);
