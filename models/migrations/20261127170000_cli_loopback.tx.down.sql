UPDATE oauth_clients
SET redirect_uris = array_remove(redirect_uris, 'http://127.0.0.1/callback')
WHERE id = 'pressroom';
