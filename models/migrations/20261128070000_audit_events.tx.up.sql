-- The audit trail (docs/audit.md): one row per write, publish, schedule
-- change, rollback, sign-in, failed sign-in and token refresh, inserted in
-- the transaction of the change it records (models.RecordAudit), so a
-- change that rolls back leaves no row and a committed one always has its
-- row.
--
-- The actor is a person (user_id) or an integration client
-- (oauth_client_id), or neither (a failed sign-in by an unknown name);
-- both are kept as plain ids, not foreign keys: the trail outlives the
-- users and clients it names. site_id is NULL only for a failed sign-in
-- that names no site of a known user. changed holds attribute names, never
-- values. Rows are pruned after PRESSROOM_AUDIT_RETENTION
-- (models.PruneAuditEvents), oldest first.
CREATE TABLE audit_events (
    id              uuid PRIMARY KEY,
    site_id         uuid REFERENCES sites (id) ON DELETE CASCADE,
    user_id         uuid,
    oauth_client_id text,
    action          text NOT NULL CHECK (length(action) <= 100),
    item_type       text NOT NULL CHECK (length(item_type) <= 100),
    item_id         text CHECK (length(item_id) <= 200),
    changed         text[] NOT NULL DEFAULT '{}',
    request_id      text NOT NULL DEFAULT '' CHECK (length(request_id) <= 100),
    client_address  text NOT NULL DEFAULT '' CHECK (length(client_address) <= 100),
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- GET /audit-events: a site's events, newest first, paged by (created_at, id).
CREATE INDEX audit_events_site_idx ON audit_events (site_id, created_at DESC, id DESC);
-- The prune: oldest first, across sites.
CREATE INDEX audit_events_created_idx ON audit_events (created_at);
