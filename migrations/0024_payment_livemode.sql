-- Test and live modes (issue 47): a payment is live or test, fixed when it is made. A test key
-- never sees a live payment (nor its refunds and events), a live key never a test one.
--
-- The payments made before have no key mode (every key reached every account), so they get the
-- rule a legacy key's payment gets now (src/routing/select.ts paymentLivemode): live when one of its
-- candidate accounts is live (none: when one of the accounts its route named is). Which accounts are
-- live is read from the routing snapshot the payment was routed with (routing_snapshots, by
-- payments.routing_snapshot). Snapshots hold no secrets, so the mode is derived from what they do
-- hold, the sandbox flag: a sandbox is test, any other account live. The one account that rule gets
-- wrong is a Stripe account on a test-mode key at a non-sandbox endpoint (Stripe's own test mode):
-- its payments become live, seen by live and legacy keys and not by test keys; nothing more. A
-- snapshot that went missing leaves nothing to decide by: live, so no test key is shown what may
-- have moved real money.
ALTER TABLE payments ADD COLUMN livemode boolean;

UPDATE payments p
   SET livemode = CASE
     WHEN s.content IS NULL THEN true
     ELSE COALESCE((
       SELECT bool_or(COALESCE(s.content->'connectors'->a.name->>'mode' = 'live',
                               (s.content->'connectors'->a.name->>'sandbox')::boolean = false))
         FROM (SELECT c AS name FROM jsonb_array_elements_text(p.routing->'candidates') c
                WHERE jsonb_array_length(p.routing->'candidates') > 0
               UNION ALL
               SELECT k->>'connector' FROM jsonb_array_elements(p.routing->'skipped') k
                WHERE jsonb_array_length(p.routing->'candidates') = 0) a
        WHERE s.content->'connectors' ? a.name), false)
   END
  FROM payments q
  LEFT JOIN routing_snapshots s ON s.version = q.routing_snapshot
 WHERE q.id = p.id;

ALTER TABLE payments ALTER COLUMN livemode SET NOT NULL;

-- Every merchant read is scoped by mode now: the list (newest first by id) is one range of this index.
CREATE INDEX payments_merchant_livemode_idx ON payments (merchant_id, livemode, id);
