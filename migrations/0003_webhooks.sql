-- Webhooks (issue 9): the inbox keeps the verified event in the gateway's terms (processing and
-- replay never re-verify a signature whose timestamp has aged), inbound processing and outbound
-- deliveries run from outbox rows like every other job, each delivery attempt is kept for the
-- merchant to see, and merchant events are created exactly once per outbox row.
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check
  CHECK (kind IN ('provider_call', 'timer', 'merchant_event', 'ledger', 'inbound_event', 'event_delivery'));

ALTER TABLE inbound_events ADD COLUMN event jsonb;
ALTER TABLE inbound_events ADD COLUMN tries integer NOT NULL DEFAULT 0 CHECK (tries >= 0);
-- The dead letter: processing gave up; `replayInboundEvent` puts it back through the same checks.
CREATE INDEX inbound_events_failed_idx ON inbound_events (received_at) WHERE outcome = 'failed';

-- The outbox row a merchant event was made from: a second run of the same row inserts nothing.
ALTER TABLE merchant_events ADD COLUMN source_outbox_id bigint;
ALTER TABLE merchant_events ADD CONSTRAINT merchant_events_source_outbox_key UNIQUE (source_outbox_id);

CREATE TABLE event_delivery_attempts (
  id           bigserial PRIMARY KEY,
  delivery_id  text NOT NULL REFERENCES event_deliveries (id),
  attempt      integer NOT NULL CHECK (attempt >= 1),
  kid          text NOT NULL,
  status_code  integer,
  error        text,
  duration_ms  integer NOT NULL CHECK (duration_ms >= 0),
  at           timestamptz NOT NULL
);
CREATE INDEX event_delivery_attempts_delivery_idx ON event_delivery_attempts (delivery_id, id);
-- "Which kids signed something recently" keeps retired keys published (JWKS) while they may still be checked.
CREATE INDEX event_delivery_attempts_kid_idx ON event_delivery_attempts (kid, at);

-- Only when SWITCHYARD_SIGNING_JWKS is unset (local use): one generated key, shared by every process.
CREATE TABLE signing_keys (
  kid          text PRIMARY KEY,
  private_jwk  jsonb NOT NULL,
  public_jwk   jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  retired_at   timestamptz
);
