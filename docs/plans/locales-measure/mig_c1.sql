\timing on
BEGIN;
SET lock_timeout = '5s';
ALTER TABLE sites ADD COLUMN locales text[] NOT NULL DEFAULT '{en}', ADD COLUMN base_locale text NOT NULL DEFAULT 'en', ADD COLUMN locale_fallbacks jsonb NOT NULL DEFAULT '{}', ADD COLUMN require_default_locale boolean NOT NULL DEFAULT true;
ALTER TABLE pages ADD COLUMN translations jsonb NOT NULL DEFAULT '{}', ALTER COLUMN title DROP NOT NULL;
ALTER TABLE contents ADD COLUMN translations jsonb NOT NULL DEFAULT '{}', ALTER COLUMN title DROP NOT NULL;
ALTER TABLE content_blocks ADD COLUMN translations jsonb NOT NULL DEFAULT '{}';
ALTER TABLE versions ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE hyperlinks ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE drafts ADD COLUMN locale text NOT NULL DEFAULT '';
ALTER TABLE drafts DROP CONSTRAINT drafts_item_type_item_id_key;
CREATE UNIQUE INDEX drafts_item_type_item_id_key ON drafts (item_type, item_id, locale);
ALTER TABLE search_documents ADD COLUMN locale text NOT NULL DEFAULT '';
COMMIT;
