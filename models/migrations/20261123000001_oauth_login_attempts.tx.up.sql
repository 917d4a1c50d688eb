-- Sign-in attempts in progress: each holds a place under its throttle keys
-- (user and address) while its password is checked, so that parallel
-- guesses cannot outnumber the failures still allowed. A place is given
-- back when the attempt ends; one left by a crashed process expires.
CREATE TABLE oauth_login_attempts (
    id         uuid NOT NULL,
    key        text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (id, key)
);
CREATE INDEX oauth_login_attempts_key ON oauth_login_attempts (key, expires_at);
