DROP INDEX search_documents_pages_idx, search_documents_contents_idx, search_documents_blocks_idx, search_documents_assets_idx;
CREATE INDEX search_documents_search_idx ON search_documents USING gin (site_id, item_type, search);
