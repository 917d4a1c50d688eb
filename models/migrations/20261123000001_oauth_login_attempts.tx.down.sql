DROP TABLE oauth_login_attempts;
