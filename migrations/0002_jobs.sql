-- Jobs: the relay remembers when it last published a row, workers claim rows with a lease
-- before any provider call, and payments keep the payment method the worker sends.
ALTER TABLE outbox ADD COLUMN published_at timestamptz;
ALTER TABLE outbox ADD COLUMN claimed_until timestamptz;
ALTER TABLE outbox ADD COLUMN claimed_by text;
ALTER TABLE payments ADD COLUMN payment_method jsonb;
-- Rows due for publishing: pending, oldest run_at first.
CREATE INDEX outbox_publish_idx ON outbox (run_at, id) WHERE status = 'pending';
