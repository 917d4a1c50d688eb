\timing on
SET session_replication_role = replica;
CREATE TABLE bench_pages AS SELECT row_number() OVER (ORDER BY id) n, id FROM pages;
CREATE UNIQUE INDEX ON bench_pages (n);
CREATE TABLE bench_blocks AS SELECT row_number() OVER (ORDER BY id) n, id FROM content_blocks ORDER BY id LIMIT 6000;
CREATE UNIQUE INDEX ON bench_blocks (n);
UPDATE content_blocks b SET body = repeat('<p>English body text about houses and gardens. </p>', 80) FROM bench_blocks x WHERE x.id = b.id;
