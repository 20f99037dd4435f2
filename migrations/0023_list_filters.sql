-- Lists and filters of the merchant API (issue 48): GET /v1/payments, /v1/refunds and /v1/events
-- answer newest first by (created_at, id), keyset-paged, and every filter is an index range on a
-- merchant's rows (test/integration/api/list-plans.test.ts checks the plans on 100k payments).
-- Built without CONCURRENTLY: migrations run in a transaction. On a large live table, build the
-- indexes by hand with CREATE INDEX CONCURRENTLY under these names first; IF NOT EXISTS skips them.

-- The connector a payment is on, as its resource shows it (src/core/payment-connector.ts): the
-- attempt holding it (authorized, else review), else the latest attempt. transition() writes it
-- with every version of the row; here it is filled for the rows written before.
ALTER TABLE payments ADD COLUMN connector text;
UPDATE payments p SET connector = (
  SELECT a.connector FROM payment_attempts a WHERE a.payment_id = p.id
   ORDER BY CASE a.status WHEN 'authorized' THEN 0 WHEN 'review' THEN 1 ELSE 2 END,
            CASE WHEN a.status IN ('authorized', 'review') THEN a.no ELSE -a.no END
   LIMIT 1);

-- A refund names its merchant, so a merchant's refunds are one index range (not every refund
-- joined to its payment); the foreign key makes it the payment's merchant and no other.
ALTER TABLE refunds ADD COLUMN merchant_id text;
UPDATE refunds r SET merchant_id = p.merchant_id FROM payments p WHERE p.id = r.payment_id;
ALTER TABLE refunds ALTER COLUMN merchant_id SET NOT NULL;
ALTER TABLE refunds ADD CONSTRAINT refunds_payment_merchant_fkey FOREIGN KEY (merchant_id, payment_id) REFERENCES payments (merchant_id, id);

-- Payments: the list order, then each equality filter followed by the list order (a filtered
-- page is read in order, and the cursor is a range on the same index). The state and reference
-- indexes grow the list order; queries on their old columns still use them as a prefix.
CREATE INDEX IF NOT EXISTS payments_merchant_created_idx ON payments (merchant_id, created_at, id);
DROP INDEX IF EXISTS payments_merchant_state_idx;
CREATE INDEX IF NOT EXISTS payments_merchant_state_created_idx ON payments (merchant_id, state, created_at, id);
DROP INDEX IF EXISTS payments_merchant_reference_idx;
CREATE INDEX IF NOT EXISTS payments_merchant_reference_created_idx ON payments (merchant_id, reference, created_at, id);
CREATE INDEX IF NOT EXISTS payments_merchant_connector_created_idx ON payments (merchant_id, connector, created_at, id);
CREATE INDEX IF NOT EXISTS payments_merchant_currency_created_idx ON payments (merchant_id, currency, created_at, id);
-- An amount range cannot also be in list order: the planner picks this or the list order by
-- how many rows the range holds.
CREATE INDEX IF NOT EXISTS payments_merchant_amount_idx ON payments (merchant_id, amount);

CREATE INDEX IF NOT EXISTS refunds_merchant_created_idx ON refunds (merchant_id, created_at, id);
CREATE INDEX IF NOT EXISTS refunds_merchant_status_created_idx ON refunds (merchant_id, status, created_at, id);
CREATE INDEX IF NOT EXISTS refunds_payment_created_idx ON refunds (payment_id, created_at, id);

CREATE INDEX IF NOT EXISTS merchant_events_merchant_created_idx ON merchant_events (merchant_id, created_at, id);
CREATE INDEX IF NOT EXISTS merchant_events_merchant_type_created_idx ON merchant_events (merchant_id, type, created_at, id);
