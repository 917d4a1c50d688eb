-- Themes, their layouts and theme assets, and the site's live theme.
--
-- Every child row carries site_id, and its foreign keys name (site_id, id)
-- of the parent, so the database itself refuses a layout of one site in
-- another site's theme, or a theme asset pointing at another site's asset.

-- A theme is a working copy until PATCH /site publishes it: published_at is
-- then set, and the theme with the greatest published_at is the live one
-- (sites.theme_id, kept equal to it by the publishing transaction).
CREATE TABLE themes (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    title        text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    description  text CHECK (length(description) <= 2000),
    published_at timestamptz,
    version      integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (site_id, id)
);
CREATE INDEX themes_site_idx ON themes (site_id, created_at);
CREATE INDEX themes_published_idx ON themes (site_id, published_at DESC) WHERE published_at IS NOT NULL;

-- Layouts are Liquid templates of a theme. file_name is unique per theme
-- regardless of case, so a theme can be written to any file system.
-- (site_id, id) is unique so that tables of other features may reference a
-- layout together with its site.
CREATE TABLE layouts (
    id          uuid PRIMARY KEY,
    site_id     uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    theme_id    uuid NOT NULL,
    title       text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    file_name   text NOT NULL CHECK (file_name ~ '^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.liquid$' AND length(file_name) <= 255),
    description text CHECK (length(description) <= 2000),
    is_unique   boolean NOT NULL DEFAULT false,
    content     text NOT NULL CHECK (octet_length(content) BETWEEN 1 AND 1048576),
    version     integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (site_id, id),
    FOREIGN KEY (site_id, theme_id) REFERENCES themes (site_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX layouts_file_name_key ON layouts (theme_id, lower(file_name));
CREATE INDEX layouts_site_idx ON layouts (site_id);

-- Theme assets place an asset of the site at a path in a theme's assets
-- folder; the path is unique per theme regardless of case.
ALTER TABLE assets ADD CONSTRAINT assets_site_id_id_key UNIQUE (site_id, id);
CREATE TABLE theme_assets (
    id         uuid PRIMARY KEY,
    site_id    uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    theme_id   uuid NOT NULL,
    asset_id   uuid NOT NULL,
    path       text NOT NULL CHECK (length(path) BETWEEN 1 AND 255),
    version    integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (site_id, theme_id) REFERENCES themes (site_id, id) ON DELETE CASCADE,
    FOREIGN KEY (site_id, asset_id) REFERENCES assets (site_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX theme_assets_path_key ON theme_assets (theme_id, lower(path));
CREATE INDEX theme_assets_asset_idx ON theme_assets (asset_id, created_at);
CREATE INDEX theme_assets_site_idx ON theme_assets (site_id);

-- The site's live theme, and the site's version for optimistic concurrency.
-- MATCH SIMPLE: a NULL theme_id (nothing published yet) is not checked.
ALTER TABLE sites
    ADD COLUMN version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    ADD COLUMN theme_id uuid,
    ADD CONSTRAINT sites_theme_fkey FOREIGN KEY (id, theme_id) REFERENCES themes (site_id, id);
