\timing on
SET session_replication_role = replica;
UPDATE pages SET translations = jsonb_build_object('title@de', 'Seite ' || title, 'slug@de', slug || '-de', 'description@de', 'Eine Beschreibung der Seite über Gärten', 'title@fr', 'Page ' || title, 'slug@fr', slug || '-fr');
UPDATE content_blocks b SET translations = jsonb_build_object('body@de', repeat('<p>Deutscher Text über Häuser und Gärten. </p>', 80), 'body@fr', repeat('<p>Texte français sur les maisons et les jardins. </p>', 80)) FROM bench_blocks x WHERE x.id = b.id;
VACUUM ANALYZE pages; VACUUM ANALYZE content_blocks;
