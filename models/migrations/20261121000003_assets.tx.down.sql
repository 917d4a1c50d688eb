DROP TABLE asset_uploads;
DROP TABLE asset_images;
DROP TABLE assets;
DROP TABLE upload_signatures;
