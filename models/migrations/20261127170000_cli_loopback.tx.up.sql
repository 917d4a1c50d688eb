-- `pressroom login` opens the system browser and receives the code on a
-- loopback redirect, http://127.0.0.1:<any port>/callback (RFC 8252 §7.3),
-- as the built-in public client. Public clients may use any port on a
-- loopback URI they registered (api/oauth/client.go redirectAllowed), so the
-- client registers it without a port. The out-of-band URI stays allowed for
-- every client (`pressroom login --no-browser`).
UPDATE oauth_clients
SET redirect_uris = array_append(redirect_uris, 'http://127.0.0.1/callback')
WHERE id = 'pressroom' AND NOT ('http://127.0.0.1/callback' = ANY (redirect_uris));
