-- Webhooks (docs/webhooks.md): subscriptions, the outbox of events written
-- in the transaction of the change they report, and one delivery per
-- event and subscribed webhook.
CREATE TABLE webhooks (
    id           uuid PRIMARY KEY,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    url          text NOT NULL,
    events       text[] NOT NULL CHECK (cardinality(events) > 0),
    active       boolean NOT NULL DEFAULT true,
    description  text,
    -- The secret sealed with PRESSROOM_WEBHOOK_SECRET_KEY (AES-GCM): the
    -- worker needs it back to sign. Its last 4 characters show it masked.
    secret_sealed bytea NOT NULL,
    secret_last4 text NOT NULL,
    version      integer NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX webhooks_site_idx ON webhooks (site_id, created_at);

-- seq orders a site's events: deliveries to one webhook go out in it.
CREATE TABLE webhook_events (
    id           uuid PRIMARY KEY,
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    site_id      uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    type         text NOT NULL,
    subject_type text NOT NULL,
    subject_id   uuid NOT NULL,
    -- The subject's row as the change left it, taken in its transaction.
    subject      jsonb NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    site_id          uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    webhook_id       uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id         uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    seq              bigint NOT NULL,
    event            text NOT NULL,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error       text,
    last_response    text,
    next_attempt_at  timestamptz,
    -- When its workflow was started; NULL until then (the sweep's work).
    started_at       timestamptz,
    created_at       timestamptz NOT NULL,
    delivered_at     timestamptz,
    UNIQUE (event_id, webhook_id)
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at DESC, id);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (webhook_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_unstarted_idx ON webhook_deliveries (seq) WHERE started_at IS NULL;
