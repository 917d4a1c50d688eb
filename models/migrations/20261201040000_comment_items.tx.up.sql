-- A comment never outlives its item (docs/releases.md "Comments"): the
-- item linkage of a comment named an id that answered null once a draft
-- was published or reverted, or a record created and never published
-- went with its draft's revert. Statement triggers with the deleted rows
-- (a publish deletes up to 10,000 drafts in one statement), in the
-- transaction that deletes the item; CreateComment locks its item FOR
-- KEY SHARE, so a comment written meanwhile is committed, and seen here,
-- before the item goes. A record whose deletion is published keeps its
-- comments while it is in the trash (a restore brings it back under its
-- id); the trash purge deletes them with its versions (drafts.PruneHistory).

-- A draft's comments go with it (published or reverted: the change they
-- discussed is live or abandoned).
CREATE FUNCTION comments_of_deleted_drafts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM comments c USING gone g
     WHERE c.site_id = g.site_id AND c.item_key = 'drafts:' || g.id::text;
    RETURN NULL;
END $$;
CREATE TRIGGER drafts_comments_gone AFTER DELETE ON drafts
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION comments_of_deleted_drafts();

-- A record's comments go with its row when it has no history (a create
-- reverted before it was published): no trash keeps it. TG_ARGV[0] is the
-- item type.
CREATE FUNCTION comments_of_deleted_records() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM comments c USING gone g
     WHERE c.site_id = g.site_id AND c.item_key = TG_ARGV[0] || ':' || g.id::text
       AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.item_type = TG_ARGV[0] AND v.item_id = g.id);
    RETURN NULL;
END $$;
CREATE TRIGGER pages_comments_gone AFTER DELETE ON pages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION comments_of_deleted_records('pages');
CREATE TRIGGER contents_comments_gone AFTER DELETE ON contents
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION comments_of_deleted_records('contents');
CREATE TRIGGER content_blocks_comments_gone AFTER DELETE ON content_blocks
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION comments_of_deleted_records('content-blocks');

-- Comments already orphaned.
DELETE FROM comments c WHERE c.item_type = 'drafts' AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.id = c.item_id);
DELETE FROM comments c WHERE c.item_type IN ('pages', 'contents', 'content-blocks')
   AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.item_type = c.item_type AND v.item_id = c.item_id)
   AND NOT EXISTS (SELECT 1 FROM pages t WHERE c.item_type = 'pages' AND t.id = c.item_id)
   AND NOT EXISTS (SELECT 1 FROM contents t WHERE c.item_type = 'contents' AND t.id = c.item_id)
   AND NOT EXISTS (SELECT 1 FROM content_blocks t WHERE c.item_type = 'content-blocks' AND t.id = c.item_id);
