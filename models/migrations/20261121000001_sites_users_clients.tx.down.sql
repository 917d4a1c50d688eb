DROP TABLE oauth_clients;
DROP TABLE users;
DROP TABLE sites;
