DROP INDEX release_reviews_unnotified_idx;
ALTER TABLE release_reviews DROP COLUMN notified_at;
