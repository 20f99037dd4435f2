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
