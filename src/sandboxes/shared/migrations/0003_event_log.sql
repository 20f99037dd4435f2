-- Events are kept whether or not they are delivered (Stripe lists them: GET /v1/events, 30 days);
-- created_ms is the sandbox clock when the event was emitted (created_at is the real time).
ALTER TABLE sandbox_events ADD COLUMN IF NOT EXISTS created_ms bigint;
CREATE INDEX IF NOT EXISTS sandbox_events_created ON sandbox_events (account, created_ms) WHERE body IS NOT NULL;
