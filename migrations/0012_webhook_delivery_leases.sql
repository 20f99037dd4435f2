-- Issue 34, part 2: a delivery waiting for its endpoint writes nothing and holds no slot, and the
-- per-endpoint in-flight limit holds across every worker process. A worker takes due deliveries
-- in one statement (src/webhooks/outbound/delivery-take.ts) that claims each delivery's outbox
-- row and writes a lease naming its endpoint and merchant; the lease is renewed while the POST
-- runs and deleted in the transaction that records the attempt. A lease nobody renews expires, so
-- a killed worker blocks its endpoint's slot for one lease at most.
CREATE TABLE webhook_endpoint_leases (
  outbox_id    bigint PRIMARY KEY,
  endpoint_id  text NOT NULL,
  merchant_id  text NOT NULL,
  holder       text NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX webhook_endpoint_leases_endpoint_idx ON webhook_endpoint_leases (endpoint_id, expires_at);

-- One endpoint's due deliveries, oldest first: the take reads each endpoint with free slots here,
-- so a backlog at a slow endpoint is never scanned on behalf of another.
CREATE INDEX event_deliveries_endpoint_due_idx ON event_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
-- A delivery's pending job (its outbox row).
CREATE INDEX outbox_delivery_pending_idx ON outbox ((payload->>'deliveryId')) WHERE kind = 'event_delivery' AND status = 'pending';

-- Deliveries are taken for enabled endpoints only, and deleting an endpoint now ends its pending
-- deliveries in the same transaction. Those left pending by deletions before this migration end here.
WITH dl AS (
  UPDATE event_deliveries d SET status = 'failed', next_attempt_at = NULL, last_error = 'endpoint deleted'
    FROM webhook_endpoints w
   WHERE w.id = d.endpoint_id AND w.status = 'disabled' AND d.status = 'pending' RETURNING d.id
)
UPDATE outbox SET status = 'done', done_at = now(), claimed_until = NULL, last_error = 'skipped: endpoint deleted'
 WHERE kind = 'event_delivery' AND status = 'pending' AND payload->>'deliveryId' IN (SELECT id FROM dl);

-- The take itself (src/webhooks/outbound/delivery-take.ts calls it): one round trip that takes the
-- fleet-wide advisory lock, drops expired leases and claims what may be taken, so the lock is held
-- for the server-side work only, never across client round trips (under CPU starvation those made
-- takes queue behind the lock). Each statement of a PL/pgSQL function in READ COMMITTED reads a
-- fresh snapshot, so the counts are read after the lock is held.
CREATE FUNCTION webhook_take_deliveries(p_now timestamptz, p_holder text, p_slots integer, p_per_endpoint integer, p_per_merchant integer, p_until timestamptz)
RETURNS TABLE (out_id bigint, out_token text, out_payload jsonb, out_endpoint_id text, out_merchant_id text, out_run_at timestamptz, out_attempts integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(7420511034);
  DELETE FROM webhook_endpoint_leases WHERE expires_at <= p_now;
  RETURN QUERY
    WITH ep_busy AS (
      SELECT endpoint_id, count(*)::int AS n FROM webhook_endpoint_leases GROUP BY endpoint_id
    ), m_busy AS (
      SELECT merchant_id, count(*)::int AS n FROM webhook_endpoint_leases GROUP BY merchant_id
    ), cand AS (
      SELECT w.id AS endpoint_id, w.merchant_id, coalesce(b.n, 0) AS busy
        FROM webhook_endpoints w LEFT JOIN ep_busy b ON b.endpoint_id = w.id LEFT JOIN m_busy mb ON mb.merchant_id = w.merchant_id
       WHERE w.status = 'enabled' AND coalesce(b.n, 0) < p_per_endpoint AND coalesce(mb.n, 0) < p_per_merchant
         AND EXISTS (SELECT 1 FROM event_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= p_now)
    ), picks AS (
      SELECT c.endpoint_id, c.merchant_id, c.busy, p.outbox_id, p.due,
             row_number() OVER (PARTITION BY c.endpoint_id ORDER BY p.due, p.outbox_id) AS k
        FROM cand c CROSS JOIN LATERAL (
          SELECT j.id AS outbox_id, j.run_at AS due
            FROM event_deliveries d CROSS JOIN LATERAL (
              SELECT o.id, o.run_at FROM outbox o
               WHERE o.kind = 'event_delivery' AND o.status = 'pending' AND o.payload->>'deliveryId' = d.id AND o.run_at <= p_now
                 AND (o.claimed_until IS NULL OR o.claimed_until < p_now)
               ORDER BY o.id LIMIT 1
            ) j
           WHERE d.endpoint_id = c.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= p_now
           ORDER BY d.next_attempt_at, d.id
           LIMIT p_per_endpoint - c.busy
        ) p
    ), ranked AS (
      SELECT p.*, coalesce(mb.n, 0) + row_number() OVER (PARTITION BY p.merchant_id ORDER BY p.busy + p.k, p.due, p.outbox_id) AS m_load
        FROM picks p LEFT JOIN m_busy mb ON mb.merchant_id = p.merchant_id
    ), chosen AS (
      SELECT * FROM ranked WHERE m_load <= p_per_merchant
       ORDER BY m_load, due, outbox_id LIMIT p_slots
    ), claimed AS (
      UPDATE outbox o SET claimed_until = p_until, claimed_by = p_holder || '~' || gen_random_uuid()::text, attempts = o.attempts + 1
        FROM chosen c
       WHERE o.id = c.outbox_id AND o.status = 'pending' AND (o.claimed_until IS NULL OR o.claimed_until < p_now)
      RETURNING o.id, o.claimed_by AS token, o.payload, o.run_at, o.attempts, c.endpoint_id, c.merchant_id
    ), leased AS (
      INSERT INTO webhook_endpoint_leases (outbox_id, endpoint_id, merchant_id, holder, expires_at)
      SELECT id, endpoint_id, merchant_id, token, p_until FROM claimed
      ON CONFLICT (outbox_id) DO UPDATE SET endpoint_id = EXCLUDED.endpoint_id, merchant_id = EXCLUDED.merchant_id, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
      RETURNING outbox_id
    )
    SELECT c.id, c.token, c.payload, c.endpoint_id, c.merchant_id, c.run_at, c.attempts FROM claimed c JOIN leased l ON l.outbox_id = c.id;
END
$$;
