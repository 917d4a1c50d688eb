\set n random(1, 10000)
SELECT id AS pid FROM bench_pages WHERE n = :n \gset
SELECT to_jsonb(t), (SELECT jsonb_object_agg(l.locale, to_jsonb(l)) FROM page_locales l WHERE l.page_id = t.id AND l.locale = ANY('{de,en}')), NULL::text FROM pages t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
