-- §2.9 of docs/plans/locales.md, run on an empty scratch database:
-- psql -h 127.0.0.1 -U postgres -d scratch_locales -f search.sql
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE TEXT SEARCH CONFIGURATION pressroom (COPY = english);
DO $$
DECLARE lang text;
BEGIN
  FOREACH lang IN ARRAY ARRAY['arabic','armenian','basque','catalan','danish','dutch','english','finnish','french','german','greek','hindi','hungarian','indonesian','irish','italian','lithuanian','nepali','norwegian','portuguese','romanian','russian','serbian','spanish','swedish','tamil','turkish','yiddish'] LOOP
    IF EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = lang) THEN
      EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = %I)', 'pressroom_' || lang, lang);
      EXECUTE format('ALTER TEXT SEARCH CONFIGURATION %I ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, %I',
                     'pressroom_' || lang, lang || '_stem');
    END IF;
  END LOOP;
END $$;
CREATE TEXT SEARCH CONFIGURATION pressroom_simple (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION pressroom_simple ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, simple;
SELECT count(*) AS configs FROM pg_ts_config WHERE cfgname LIKE 'pressroom_%';
SELECT to_tsvector('pressroom_german', 'Häuser und Gärten') AS de_doc,
       to_tsvector('pressroom_german', 'Häuser') @@ to_tsquery('pressroom_german', 'haus') AS haus_finds_haeuser,
       to_tsvector('pressroom_simple', '東京 Tōkyō') AS simple_doc;

CREATE TABLE search_documents (site_id uuid NOT NULL, item_type text NOT NULL, item_id uuid NOT NULL, locale text NOT NULL DEFAULT '',
    drafted boolean NOT NULL, live boolean NOT NULL, search tsvector NOT NULL, covered text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (item_type, item_id, locale, drafted));
CREATE INDEX search_documents_search_idx ON search_documents USING gin (site_id, item_type, search);
INSERT INTO search_documents SELECT '00000000-0000-0000-0000-000000000001', 'pages', md5('p'||i)::uuid, '', false, true,
    to_tsvector('pressroom', 'house garden page '||i||' weather') FROM generate_series(1,50000) i;
INSERT INTO search_documents SELECT '00000000-0000-0000-0000-000000000001', 'pages', md5('p'||i)::uuid, 'de', false, true,
    to_tsvector('pressroom_german', 'Häuser Gärten Seite '||i) FROM generate_series(1,50000,2) i;
UPDATE search_documents s SET covered = '{de}' WHERE EXISTS (SELECT 1 FROM search_documents e WHERE e.item_id = s.item_id AND e.locale = 'de');
VACUUM ANALYZE search_documents;
-- shadowing by a correlated NOT EXISTS (hashed into a scan of every de document)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
SELECT sd.item_id FROM search_documents sd
 WHERE sd.site_id = '00000000-0000-0000-0000-000000000001' AND sd.item_type = 'pages' AND NOT sd.drafted
   AND ((sd.locale = 'de' AND sd.search @@ to_tsquery('pressroom_german', 'weather'))
     OR (sd.locale = '' AND sd.search @@ to_tsquery('pressroom', 'weather')
         AND NOT EXISTS (SELECT 1 FROM search_documents e WHERE e.item_type = sd.item_type AND e.item_id = sd.item_id AND e.locale = 'de' AND e.drafted = sd.drafted)));
-- shadowing by the covered column (chosen)
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
SELECT sd.item_id FROM search_documents sd
 WHERE sd.site_id = '00000000-0000-0000-0000-000000000001' AND sd.item_type = 'pages' AND NOT sd.drafted
   AND ((sd.locale = 'de' AND sd.search @@ to_tsquery('pressroom_german', 'weather'))
     OR (sd.locale = '' AND sd.search @@ to_tsquery('pressroom', 'weather') AND NOT sd.covered && '{de}'));
