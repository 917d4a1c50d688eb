-- Why a revision failed, for machines: a code (path_taken: the publish
-- would put two live pages at one path) and what it is about (the pages),
-- beside error_message for people. POST /revisions answers a failure
-- with a code as that error (409 path_taken), others as publish_failed.
ALTER TABLE revisions ADD COLUMN error_code text, ADD COLUMN error_meta jsonb;
