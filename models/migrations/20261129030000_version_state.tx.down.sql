DROP INDEX IF EXISTS versions_item_history_idx;
ALTER TABLE versions DROP COLUMN IF EXISTS state;
