\timing on
-- adding locale de to a site of 10,000 pages: derive each page's German path (own slug@de, else the base slug)
BEGIN;
INSERT INTO page_locale_paths (site_id, page_id, locale, parent_id, slug, path, live)
WITH RECURSIVE walk AS (
  SELECT p.id, p.site_id, p.parent_id, coalesce(p.translations ->> 'slug@de', p.slug) AS slug,
         CASE WHEN coalesce(p.translations ->> 'slug@de', p.slug) = '' THEN '/' ELSE '/' || coalesce(p.translations ->> 'slug@de', p.slug) END AS path, p.published_at IS NOT NULL AS live
    FROM pages p WHERE p.site_id = '00000000-0000-0000-0000-000000000001' AND p.parent_id IS NULL
  UNION ALL
  SELECT c.id, c.site_id, c.parent_id, coalesce(c.translations ->> 'slug@de', c.slug),
         rtrim(w.path, '/') || '/' || coalesce(c.translations ->> 'slug@de', c.slug), c.published_at IS NOT NULL
    FROM pages c JOIN walk w ON c.parent_id = w.id)
SELECT site_id, id, 'de', parent_id, slug, path, live FROM walk;
SET CONSTRAINTS ALL IMMEDIATE;
COMMIT;
-- a German path lookup (GET /pages?locale-tag=de&filter[path]=...)
EXPLAIN (ANALYZE, COSTS OFF) SELECT page_id FROM page_locale_paths WHERE site_id = '00000000-0000-0000-0000-000000000001' AND locale = 'de' AND path = '/root-5-de/child-7-de' AND live;
-- alternates of one page
EXPLAIN (ANALYZE, COSTS OFF) SELECT jsonb_object_agg(locale, path) FROM page_locale_paths WHERE page_id = md5('p5-7')::uuid AND live;
-- force-removing locale fr: strip its keys from every row of the site
BEGIN;
UPDATE pages SET translations = translations - ARRAY['title@fr','slug@fr','description@fr','keywords@fr'] WHERE site_id = '00000000-0000-0000-0000-000000000001' AND translations ?| ARRAY['title@fr','slug@fr','description@fr','keywords@fr'];
UPDATE contents SET translations = translations - ARRAY['title@fr'] WHERE site_id = '00000000-0000-0000-0000-000000000001' AND translations ? 'title@fr';
UPDATE content_blocks SET translations = translations - ARRAY['body@fr'] WHERE site_id = '00000000-0000-0000-0000-000000000001' AND translations ? 'body@fr';
ROLLBACK;
