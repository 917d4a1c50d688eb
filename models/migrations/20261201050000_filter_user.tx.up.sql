-- filter[user] (who last changed a record) starts from the user's own
-- drafts, versions and uploads in the site, each then checked to be the
-- record's latest by a probe of versions_item_history_idx (or
-- asset_uploads_asset_idx), instead of a subquery per row of the site.
CREATE INDEX drafts_user_idx ON drafts (site_id, item_type, user_id);
CREATE INDEX versions_user_idx ON versions (site_id, item_type, user_id);
CREATE INDEX asset_uploads_user_idx ON asset_uploads (site_id, user_id);
