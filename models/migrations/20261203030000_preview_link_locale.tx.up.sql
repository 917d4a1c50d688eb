-- The locale a preview link shows its release in (docs/locales.md): a
-- read through the link without locale-tag reads in it. NULL: the site's
-- default locale, as before locales. Catalogue-only (no default to write).
ALTER TABLE preview_links ADD COLUMN locale text;
