\set n random(1, 10000)
SELECT id AS pid FROM bench_pages WHERE n = :n \gset
SELECT to_jsonb(t), NULL::jsonb, (SELECT jsonb_object_agg(a.locale, a.path) FROM page_locale_paths a WHERE a.page_id = t.id AND a.live) FROM pages t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
