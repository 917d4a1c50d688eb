\set n random(1, 10000)
SELECT id AS pid FROM bench_pages WHERE n = :n \gset
SELECT to_jsonb(t), NULL::jsonb, NULL::text FROM pages t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
