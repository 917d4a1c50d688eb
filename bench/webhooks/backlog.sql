-- The cost of dispatching webhook deliveries while one webhook is stuck
-- with a backlog (docs/webhooks.md, "Bounded queues"; issue 25 #5).
--
--   psql "$DATABASE_URL" -v n=100000 -f bench/webhooks/backlog.sql
--
-- Run it on a scratch database, migrated (`pressroom migrate up`): it
-- writes two sites `bench-backlog-a` and `bench-backlog-b`, commits and
-- vacuums them (so the planner sees the table as autovacuum leaves it),
-- measures, and deletes them again. Site A's webhook gets n pending
-- deliveries behind a head that keeps failing, site B's webhook one fresh
-- delivery, and both 25,000 finished ones of history. It runs each query
-- five times and prints the median: the dispatch and sweep queries before
-- this change (with the index they used, made here for them) and after it
-- (the candidate queries of models/deliverystore.go LockDeliveryHeads, and
-- the count of models/outbox.go RecordEvent). Figures: docs/webhooks.md,
-- "Dispatch with a backlog".
\set ON_ERROR_STOP on
\if :{?n}
\else
\set n 100000
\endif
SET jit = off;
DELETE FROM sites WHERE subdomain_slug IN ('bench-backlog-a', 'bench-backlog-b');
INSERT INTO sites (id, subdomain_slug, title) VALUES
  ('00000000-0000-0000-0000-0000000b0a0a', 'bench-backlog-a', 'A'), ('00000000-0000-0000-0000-0000000b0a0b', 'bench-backlog-b', 'B');
INSERT INTO webhooks (id, site_id, url, events, secret_sealed, secret_last4, created_at, updated_at) VALUES
  ('00000000-0000-0000-0000-0000000b0aa1', '00000000-0000-0000-0000-0000000b0a0a', 'https://a.example/', '{draft.reverted}', 'x', 'abcd', now(), now()),
  ('00000000-0000-0000-0000-0000000b0ab1', '00000000-0000-0000-0000-0000000b0a0b', 'https://b.example/', '{draft.reverted}', 'x', 'abcd', now(), now());
WITH ev AS (
  INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
  SELECT gen_random_uuid(), CASE WHEN g % 2 = 0 THEN '00000000-0000-0000-0000-0000000b0a0a'::uuid ELSE '00000000-0000-0000-0000-0000000b0a0b'::uuid END,
    'draft.reverted', 'drafts', gen_random_uuid(), 'null', now() - interval '2 days' FROM generate_series(1, 50000) g
  RETURNING id, seq, site_id, created_at)
INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, status, attempts, started_at, created_at, delivered_at)
SELECT gen_random_uuid(), site_id, CASE WHEN site_id = '00000000-0000-0000-0000-0000000b0a0a' THEN '00000000-0000-0000-0000-0000000b0aa1'::uuid
  ELSE '00000000-0000-0000-0000-0000000b0ab1'::uuid END, id, seq, 'draft.reverted', 'succeeded', 1, created_at, created_at, created_at FROM ev;
WITH ev AS (
  INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
  SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000b0a0a', 'draft.reverted', 'drafts', gen_random_uuid(), 'null', now() FROM generate_series(1, :n)
  RETURNING id, seq, created_at)
INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, created_at)
SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000b0a0a', '00000000-0000-0000-0000-0000000b0aa1', id, seq, 'draft.reverted', created_at FROM ev;
UPDATE webhook_deliveries SET started_at = now(), attempts = 5, last_error = 'the receiver answered 500', last_status_code = 500
 WHERE id = (SELECT id FROM webhook_deliveries WHERE webhook_id = '00000000-0000-0000-0000-0000000b0aa1' AND status = 'pending' ORDER BY seq LIMIT 1);
WITH ev AS (
  INSERT INTO webhook_events (id, site_id, type, subject_type, subject_id, subject, created_at)
  VALUES (gen_random_uuid(), '00000000-0000-0000-0000-0000000b0a0b', 'draft.reverted', 'drafts', gen_random_uuid(), 'null', now()) RETURNING id, seq, created_at)
INSERT INTO webhook_deliveries (id, site_id, webhook_id, event_id, seq, event, created_at)
SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000b0a0b', '00000000-0000-0000-0000-0000000b0ab1', id, seq, 'draft.reverted', created_at FROM ev;
-- The index the old dispatch used (webhook_deliveries_unstarted_idx,
-- dropped by 20261127140000_webhook_queue), under a name of the bench's.
CREATE INDEX bench_backlog_unstarted_idx ON webhook_deliveries (seq) WHERE started_at IS NULL;
VACUUM ANALYZE webhook_deliveries, webhook_events, webhooks;

-- Each query five times; the median of its times.
CREATE FUNCTION pg_temp.bench(label text, q text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  times float8[] := '{}';
BEGIN
  FOR i IN 1..5 LOOP
    t := clock_timestamp();
    EXECUTE q;
    times := times || extract(epoch FROM clock_timestamp() - t) * 1000;
  END LOOP;
  RAISE NOTICE '%: % ms', rpad(label, 58), (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 2) FROM unnest(times) x);
END $$;
\echo 'pending deliveries queued behind site A''s failing webhook:' :n
SELECT pg_temp.bench('before: dispatch (unstarted heads, every site)', $q$
  SELECT delivery.id, delivery.site_id, delivery.webhook_id FROM webhook_deliveries AS delivery
  WHERE status = 'pending' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = delivery.webhook_id
    AND e.status = 'pending' AND e.seq < delivery.seq) AND started_at IS NULL
  ORDER BY seq, id LIMIT 500 FOR UPDATE SKIP LOCKED $q$);
SELECT pg_temp.bench('before: sweep (every head)', $q$
  SELECT delivery.id, delivery.site_id, delivery.webhook_id FROM webhook_deliveries AS delivery
  WHERE status = 'pending' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.webhook_id = delivery.webhook_id
    AND e.status = 'pending' AND e.seq < delivery.seq)
  ORDER BY seq, id LIMIT 500 FOR UPDATE SKIP LOCKED $q$);
DROP INDEX bench_backlog_unstarted_idx;
SELECT pg_temp.bench('after: dispatch of site B (its notification)', $q$
  SELECT h.id, w.id AS webhook_id FROM webhooks w
  CROSS JOIN LATERAL (SELECT p.id, p.started_at FROM webhook_deliveries p
    WHERE p.webhook_id = w.id AND p.status = 'pending' ORDER BY p.seq LIMIT 1) h
  WHERE w.site_id IN ('00000000-0000-0000-0000-0000000b0a0b') AND w.id > '00000000-0000-0000-0000-000000000000'
    AND (h.started_at IS NULL OR NOT w.active) ORDER BY w.id LIMIT 500 $q$);
SELECT pg_temp.bench('after: dispatch of every site (start, every 30 s)', $q$
  WITH RECURSIVE heads AS (
    (SELECT p.webhook_id, p.id, p.started_at FROM webhook_deliveries p
      WHERE p.status = 'pending' AND p.webhook_id > '00000000-0000-0000-0000-000000000000' ORDER BY p.webhook_id, p.seq LIMIT 1)
    UNION ALL
    SELECT n.webhook_id, n.id, n.started_at FROM heads CROSS JOIN LATERAL (SELECT p.webhook_id, p.id, p.started_at
      FROM webhook_deliveries p WHERE p.status = 'pending' AND p.webhook_id > heads.webhook_id ORDER BY p.webhook_id, p.seq LIMIT 1) n
  ) SELECT h.id, h.webhook_id FROM heads h JOIN webhooks w ON w.id = h.webhook_id
    WHERE (h.started_at IS NULL OR NOT w.active) LIMIT 500 $q$);
SELECT pg_temp.bench('after: sweep (every head)', $q$
  WITH RECURSIVE heads AS (
    (SELECT p.webhook_id, p.id, p.started_at FROM webhook_deliveries p
      WHERE p.status = 'pending' AND p.webhook_id > '00000000-0000-0000-0000-000000000000' ORDER BY p.webhook_id, p.seq LIMIT 1)
    UNION ALL
    SELECT n.webhook_id, n.id, n.started_at FROM heads CROSS JOIN LATERAL (SELECT p.webhook_id, p.id, p.started_at
      FROM webhook_deliveries p WHERE p.status = 'pending' AND p.webhook_id > heads.webhook_id ORDER BY p.webhook_id, p.seq LIMIT 1) n
  ) SELECT h.id, h.webhook_id FROM heads h JOIN webhooks w ON w.id = h.webhook_id LIMIT 500 $q$);
SELECT pg_temp.bench('after: an event of site A counts its queue (limit 1000)', $q$
  SELECT count(*) FROM (SELECT FROM webhook_deliveries p WHERE p.webhook_id = '00000000-0000-0000-0000-0000000b0aa1'
    AND p.status = 'pending' ORDER BY p.seq LIMIT 1000) queued $q$);
DELETE FROM sites WHERE subdomain_slug IN ('bench-backlog-a', 'bench-backlog-b');
