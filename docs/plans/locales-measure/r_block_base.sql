\set n random(1, 6000)
SELECT id AS pid FROM bench_blocks WHERE n = :n \gset
SELECT to_jsonb(t), NULL::jsonb, NULL::text FROM content_blocks t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
