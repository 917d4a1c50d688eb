\timing on
INSERT INTO sites (id, title, subdomain_slug) VALUES ('00000000-0000-0000-0000-000000000001','S1','s1'),('00000000-0000-0000-0000-000000000002','S2','s2');
-- 100 roots, 99 children each = 10,000 pages in site 1
INSERT INTO pages (id, site_id, parent_id, page_type, slug, path, title, description, keywords, published_at)
SELECT md5('p'||r)::uuid, '00000000-0000-0000-0000-000000000001', NULL, 'page', 'root-'||r, '/root-'||r, 'Root page '||r, 'About the root '||r, 'root, page', now()
FROM generate_series(1,100) r;
INSERT INTO pages (id, site_id, parent_id, page_type, slug, path, title, description, keywords, published_at)
SELECT md5('p'||r||'-'||c)::uuid, '00000000-0000-0000-0000-000000000001', md5('p'||r)::uuid, 'page', 'child-'||c, '/root-'||r||'/child-'||c, 'Child '||c||' of '||r, 'A description of the child page about gardening and cooking', 'child', now()
FROM generate_series(1,100) r, generate_series(1,99) c;
INSERT INTO contents (id, site_id, page_id, title, position, published_at)
SELECT md5('c'||p.id||n)::uuid, p.site_id, p.id, 'Section '||n, n, now() FROM pages p, generate_series(1,2) n;
INSERT INTO content_blocks (id, site_id, content_id, var_name, data_type, body, position, published_at)
SELECT md5('b'||c.id||n)::uuid, c.site_id, c.id, 'v'||n, 'html', '<p>Some body text number '||n||' with words about houses, gardens and the weather in spring.</p>', n, now() FROM contents c, generate_series(1,3) n;
-- 1,000 update drafts of pages
INSERT INTO drafts (id, site_id, item_type, item_id, event, drafted, object_changes)
SELECT gen_random_uuid(), site_id, 'pages', id, 'update', jsonb_build_object('title', title||' (edited)'), jsonb_build_object('title', jsonb_build_array(title, title||' (edited)'))
FROM pages ORDER BY id LIMIT 1000;
ANALYZE;
SELECT (SELECT count(*) FROM pages) pages, (SELECT count(*) FROM contents) contents, (SELECT count(*) FROM content_blocks) blocks, (SELECT count(*) FROM drafts) drafts, (SELECT count(*) FROM search_documents) docs;
SELECT pg_size_pretty(pg_total_relation_size('pages')) pages_size, pg_size_pretty(pg_total_relation_size('content_blocks')) blocks_size, pg_size_pretty(pg_total_relation_size('search_documents')) docs_size;
