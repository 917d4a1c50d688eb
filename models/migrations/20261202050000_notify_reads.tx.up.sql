-- Every change to a live record's row NOTIFYs its site on pressroom_reads
-- (models.ReadsChannel), which Postgres delivers only on commit: each API
-- replica's read cache (package readcache, docs/caching.md) drops the
-- site's documents when it hears it. A live read renders the row alone
-- (drafts.readQuery's live form joins nothing), so these three tables are
-- all a cached document depends on. Once per statement and site: a publish
-- of 1,000 drafts is one notification (Postgres also folds equal payloads
-- of one transaction into one).
CREATE FUNCTION pressroom_notify_reads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM pg_notify('pressroom_reads', s::text) FROM (SELECT DISTINCT site_id AS s FROM new_rows) x;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('pressroom_reads', s::text) FROM (SELECT DISTINCT site_id AS s FROM old_rows) x;
    ELSE
        PERFORM pg_notify('pressroom_reads', s::text)
        FROM (SELECT site_id AS s FROM old_rows UNION SELECT site_id FROM new_rows) x;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER pages_notify_reads_ins AFTER INSERT ON pages REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER pages_notify_reads_upd AFTER UPDATE ON pages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER pages_notify_reads_del AFTER DELETE ON pages REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();

CREATE TRIGGER contents_notify_reads_ins AFTER INSERT ON contents REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER contents_notify_reads_upd AFTER UPDATE ON contents REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER contents_notify_reads_del AFTER DELETE ON contents REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();

CREATE TRIGGER content_blocks_notify_reads_ins AFTER INSERT ON content_blocks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER content_blocks_notify_reads_upd AFTER UPDATE ON content_blocks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();
CREATE TRIGGER content_blocks_notify_reads_del AFTER DELETE ON content_blocks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_reads();

-- A change to access tokens (a revocation, a prune, a user's deletion
-- cascading) or memberships (a role, a section, a removal) NOTIFYs "auth"
-- on the same channel: each replica drops the token lookups it keeps
-- (api/oauth, readcache.AuthSite). Statement triggers: one notification
-- per statement, and Postgres folds a transaction's equal ones into one.
CREATE FUNCTION pressroom_notify_auth() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pressroom_reads', 'auth');
    RETURN NULL;
END $$;
CREATE TRIGGER oauth_access_tokens_notify_auth AFTER UPDATE OR DELETE ON oauth_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_auth();
CREATE TRIGGER memberships_notify_auth AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION pressroom_notify_auth();
