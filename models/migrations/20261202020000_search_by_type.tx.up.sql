-- Issue 32: GET /search took p99 121 ms at 100,000 pages (400,000
-- documents). The index (site_id, item_type, search) was read through
-- btree_gin, whose "=" is a partial match: every search read the whole
-- posting list of its site (all 400,000 documents, about 200 index pages)
-- and of its type into a bitmap before the words' few postings, whatever
-- the words (EXPLAIN (ANALYZE, BUFFERS): 217 to 256 index buffers for a
-- word of 416 documents, 4 without the site and the type in the index).
-- One GIN index per type over the words alone: a search reads only its
-- words' postings (in its type's index; GET /search one index per type,
-- UNION ALL), and the site is checked on the few rows found, as the live
-- and drafted flags already were (docs/search.md, "The index").
DROP INDEX search_documents_search_idx;
CREATE INDEX search_documents_pages_idx ON search_documents USING gin (search) WHERE item_type = 'pages';
CREATE INDEX search_documents_contents_idx ON search_documents USING gin (search) WHERE item_type = 'contents';
CREATE INDEX search_documents_blocks_idx ON search_documents USING gin (search) WHERE item_type = 'content-blocks';
CREATE INDEX search_documents_assets_idx ON search_documents USING gin (search) WHERE item_type = 'assets';
