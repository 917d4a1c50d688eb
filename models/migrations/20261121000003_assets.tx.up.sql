-- Upload signatures: one per browser upload, for exactly one key.
CREATE TABLE upload_signatures (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    key          text NOT NULL UNIQUE,
    filename     text NOT NULL,
    content_type text NOT NULL,
    max_bytes    bigint NOT NULL,
    expires_at   timestamptz NOT NULL,
    confirmed_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_signatures_unconfirmed_idx ON upload_signatures (expires_at) WHERE confirmed_at IS NULL;

-- Assets and their image files. Written in one transaction with the
-- upload's "finished" status, by the ingestion workflow.
CREATE TABLE assets (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    title        text NOT NULL,
    content_type text NOT NULL,
    asset_type   text NOT NULL,
    sub_type     text NOT NULL,
    theme_path   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assets_site_idx ON assets (site_id, created_at);

CREATE TABLE asset_images (
    id               uuid PRIMARY KEY,
    site_id          uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    asset_id         uuid NOT NULL UNIQUE REFERENCES assets (id) ON DELETE CASCADE,
    storage_key      text NOT NULL,
    file_name        text NOT NULL,
    content_type     text NOT NULL,
    file_size        bigint NOT NULL,
    width            integer NOT NULL,
    height           integer NOT NULL,
    image_properties jsonb NOT NULL,
    fingerprint      text NOT NULL,
    variants         jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- Upload notifications. One per key: posting the same key again after an
-- error retries the same upload (a new attempt of the same workflow id).
CREATE TABLE asset_uploads (
    id             uuid PRIMARY KEY,
    site_id        uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id        uuid REFERENCES users (id) ON DELETE SET NULL,
    signature_id   uuid NOT NULL REFERENCES upload_signatures (id) ON DELETE CASCADE,
    file_name      text NOT NULL,
    key            text NOT NULL UNIQUE,
    content_type   text NOT NULL,
    file_size      bigint NOT NULL,
    user_agent     text NOT NULL DEFAULT '',
    status         text NOT NULL CHECK (status IN ('processing', 'finished', 'error')),
    error_message  text,
    attempt        integer NOT NULL DEFAULT 1,
    asset_id       uuid REFERENCES assets (id) ON DELETE SET NULL,
    asset_image_id uuid REFERENCES asset_images (id) ON DELETE SET NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'error') = (error_message IS NOT NULL))
);
CREATE INDEX asset_uploads_site_idx ON asset_uploads (site_id, created_at);
