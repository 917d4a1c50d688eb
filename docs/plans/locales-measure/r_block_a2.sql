\set n random(1, 6000)
SELECT id AS pid FROM bench_blocks WHERE n = :n \gset
SELECT (to_jsonb(t) - 'translations') || jsonb_build_object('translations', (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}') FROM jsonb_each(t.translations) e WHERE split_part(e.key, '@', 2) = ANY('{de}'))), NULL::jsonb, NULL::text FROM content_blocks t WHERE t.site_id = '00000000-0000-0000-0000-000000000001' AND t.id = ANY(ARRAY[:pid]::uuid[]);
