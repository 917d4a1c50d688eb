\timing on
CREATE UNIQUE INDEX CONCURRENTLY search_documents_locale_key ON search_documents (item_type, item_id, locale, drafted);
