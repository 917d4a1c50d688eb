\timing on
SET session_replication_role = replica;
INSERT INTO page_locales SELECT id, site_id, 'de', 'Seite ' || title, 'Eine Beschreibung der Seite über Gärten', NULL, slug || '-de', path || '-de', true FROM pages;
INSERT INTO page_locales SELECT id, site_id, 'fr', 'Page ' || title, NULL, NULL, slug || '-fr', path || '-fr', true FROM pages;
UPDATE content_block_locales l SET body = repeat('<p>English body text about houses and gardens. </p>', 80) FROM bench_blocks x WHERE x.id = l.block_id;
INSERT INTO content_block_locales SELECT b.id, b.site_id, 'de', repeat('<p>Deutscher Text über Häuser und Gärten. </p>', 80) FROM bench_blocks x JOIN content_blocks b ON b.id = x.id;
INSERT INTO content_block_locales SELECT b.id, b.site_id, 'fr', repeat('<p>Texte français sur les maisons et les jardins. </p>', 80) FROM bench_blocks x JOIN content_blocks b ON b.id = x.id;
VACUUM ANALYZE pages; VACUUM ANALYZE content_blocks; VACUUM ANALYZE page_locales; VACUUM ANALYZE content_block_locales;
