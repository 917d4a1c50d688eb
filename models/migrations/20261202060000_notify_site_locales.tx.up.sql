-- The read cache (docs/caching.md) keeps each live token's lookup, which
-- since the locales migration (20261202010000) carries the site's locales
-- and chains (api/locale.go judges locale-tag by them). A change to a
-- site's locale settings NOTIFYs "auth", so every replica drops the token
-- lookups it keeps and the next request reads the new settings; and the
-- site's id, so its documents go too (a read without locale-tag is in the
-- default locale, which reordering the locales changes).
CREATE FUNCTION pressroom_notify_site_locales() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pressroom_reads', 'auth');
    PERFORM pg_notify('pressroom_reads', NEW.id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER sites_notify_locales AFTER UPDATE OF locales, base_locale, locale_fallbacks, locale_chains ON sites
    FOR EACH ROW
    WHEN (OLD.locales IS DISTINCT FROM NEW.locales OR OLD.base_locale IS DISTINCT FROM NEW.base_locale
       OR OLD.locale_chains IS DISTINCT FROM NEW.locale_chains)
    EXECUTE FUNCTION pressroom_notify_site_locales();
