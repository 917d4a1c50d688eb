DROP TRIGGER sites_notify_locales ON sites;
DROP FUNCTION pressroom_notify_site_locales();
