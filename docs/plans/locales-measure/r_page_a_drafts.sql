\set n random(1, 10000)
SELECT id AS pid FROM bench_pages WHERE n = :n \gset
SELECT to_jsonb(t), (SELECT jsonb_agg(to_jsonb(d)) FROM drafts d WHERE d.item_type = 'pages' AND d.item_id = t.id AND d.locale = ANY('{"",de}')), NULL::text FROM pages t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
