-- An integration client's Idempotency-Key (docs/auth.md, "Integration
-- tokens"): its token names no person, so revisions_idempotency_idx (per
-- user) cannot remember its keys. A revision a client posts names the
-- client (its OAuth client id, kept as a plain id as audit_events keeps
-- it), and the client's keys are unique per site and client.
ALTER TABLE revisions ADD COLUMN oauth_client_id text CHECK (length(oauth_client_id) <= 200);
CREATE UNIQUE INDEX revisions_client_idempotency_idx ON revisions (site_id, oauth_client_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL AND oauth_client_id IS NOT NULL;
