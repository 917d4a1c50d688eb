\set r random(1, 100)
\set c random(1, 99)
UPDATE pages SET title = 'T ' || :c || ' ' || clock_timestamp(), version = version + 1 WHERE id = md5('p' || :r || '-' || :c)::uuid;
