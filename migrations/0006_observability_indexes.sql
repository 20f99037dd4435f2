-- Dead letters are counted and aged at every metrics scrape and listed by the dashboard and
-- `switchyard dlq list`; dead deliveries are found by `switchyard webhooks redeliver --dead`.
-- Small partial indexes instead of scans of tables that are almost entirely done rows.
CREATE INDEX IF NOT EXISTS outbox_dead_idx ON outbox (created_at) WHERE status = 'dead';
CREATE INDEX IF NOT EXISTS event_deliveries_dead_idx ON event_deliveries (created_at) WHERE status = 'dead';
