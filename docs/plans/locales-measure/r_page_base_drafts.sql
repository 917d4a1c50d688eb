\set n random(1, 10000)
SELECT id AS pid FROM bench_pages WHERE n = :n \gset
SELECT to_jsonb(t), to_jsonb(d), NULL::text FROM pages t LEFT JOIN drafts d ON d.item_type = 'pages' AND d.item_id = t.id WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
