\set n random(1, 6000)
SELECT id AS pid FROM bench_blocks WHERE n = :n \gset
SELECT to_jsonb(t), (SELECT jsonb_object_agg(l.locale, l.body) FROM content_block_locales l WHERE l.block_id = t.id AND l.locale = ANY('{de,en}')), NULL::text FROM content_blocks t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
