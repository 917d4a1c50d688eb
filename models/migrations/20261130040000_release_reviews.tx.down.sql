DROP TABLE release_reviews;
ALTER TABLE sites DROP COLUMN release_approvals;
