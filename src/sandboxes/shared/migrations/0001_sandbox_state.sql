-- The embedded provider's own state, in its own database (never the gateway's): every process
-- that runs a sandbox for an account reads and writes these rows, so all of them are one provider.

-- One row per sandbox account: its clock, delivery settings, provider settings and the lease of
-- the one process that dispatches its webhooks.
CREATE TABLE sandbox_accounts (
  account          text PRIMARY KEY,
  type             text NOT NULL,
  clock_offset_ms  bigint NOT NULL DEFAULT 0,
  webhook_settings jsonb NOT NULL DEFAULT '{}',
  -- provider-specific settings (Adyen: commission, notification batching)
  settings         jsonb NOT NULL DEFAULT '{}',
  dispatch_owner   text,
  dispatch_until   timestamptz
);

-- Provider objects as documents, one row per aggregate that changes together (a Stripe
-- PaymentIntent with its charges, refunds and disputes; an Adyen payment with its modifications).
CREATE TABLE sandbox_objects (
  account    text NOT NULL,
  id         text NOT NULL,
  created_ms bigint NOT NULL,
  -- Adyen: the merchant reference; Stripe: null
  reference  text,
  doc        jsonb NOT NULL,
  PRIMARY KEY (account, id)
);
CREATE INDEX sandbox_objects_reference ON sandbox_objects (account, reference) WHERE reference IS NOT NULL;
CREATE INDEX sandbox_objects_created ON sandbox_objects (account, created_ms);

-- Ids of objects that live inside an aggregate (charges, refunds, disputes, modifications).
CREATE TABLE sandbox_aliases (
  account   text NOT NULL,
  alias     text NOT NULL,
  object_id text NOT NULL,
  PRIMARY KEY (account, alias)
);

-- Adyen: merchant references fenced by a technical cancel.
CREATE TABLE sandbox_fences (
  account   text NOT NULL,
  reference text NOT NULL,
  psp       text NOT NULL,
  PRIMARY KEY (account, reference)
);

-- Adyen: settlement bookings, append-only.
CREATE TABLE sandbox_bookings (
  id        bigserial PRIMARY KEY,
  account   text NOT NULL,
  booked_ms bigint NOT NULL,
  doc       jsonb NOT NULL
);
CREATE INDEX sandbox_bookings_day ON sandbox_bookings (account, booked_ms);

-- Idempotency keys. 'in_flight' is only ever committed while a delayed execution holds the key
-- (lease_until bounds it if that process dies); otherwise claim and completion share a transaction.
CREATE TABLE sandbox_idempotency_keys (
  account       text NOT NULL,
  key           text NOT NULL,
  state         text NOT NULL CHECK (state IN ('in_flight', 'done')),
  fingerprint   text,
  first_seen_ms bigint NOT NULL,
  lease_until   timestamptz,
  token         text NOT NULL,
  reply         jsonb,
  PRIMARY KEY (account, key)
);
CREATE INDEX sandbox_idempotency_keys_age ON sandbox_idempotency_keys (account, first_seen_ms) WHERE state = 'done';

-- Queued faults, consumed oldest first.
CREATE TABLE sandbox_faults (
  id         bigserial PRIMARY KEY,
  account    text NOT NULL,
  op         text NOT NULL,
  mode       text NOT NULL,
  latency_ms integer NOT NULL DEFAULT 0,
  process    text NOT NULL DEFAULT 'before',
  remaining  integer NOT NULL CHECK (remaining >= 0)
);
CREATE INDEX sandbox_faults_pending ON sandbox_faults (account, id) WHERE remaining > 0;

-- Webhook events, written in the transaction of the change that emits them; delivered by the
-- process holding the account's dispatch lease, in id order.
CREATE TABLE sandbox_events (
  id         bigserial PRIMARY KEY,
  account    text NOT NULL,
  event_id   text NOT NULL,
  type       text NOT NULL,
  -- Stripe: the serialized event; Adyen: null (items carry the notification items)
  body       text,
  items      jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  due_at     timestamptz NOT NULL,
  attempts   integer NOT NULL DEFAULT 0,
  last_status integer,
  done_at    timestamptz
);
CREATE INDEX sandbox_events_pending ON sandbox_events (account, id) WHERE done_at IS NULL;

-- Every delivery attempt (what the receiver answered), for tests and operators.
CREATE TABLE sandbox_deliveries (
  id       bigserial PRIMARY KEY,
  account  text NOT NULL,
  event_id text NOT NULL,
  type     text NOT NULL,
  attempt  integer NOT NULL,
  status   integer,
  at_ms    bigint NOT NULL
);
CREATE INDEX sandbox_deliveries_account ON sandbox_deliveries (account, id);
