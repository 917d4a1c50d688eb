-- The locales a published revision's versions changed (docs/locales.md):
-- a shared version counts as the site's base locale. The revision.published
-- webhook's payload (a copy of the row) shows it; '{}' until published.
ALTER TABLE revisions ADD COLUMN locales text[] NOT NULL DEFAULT '{}';
