-- Switchyard schema, architecture §3. Postgres is the authority; every money column is BIGINT
-- minor units. The legal-edge trigger on payments.state is NOT here: the migration runner
-- generates it from src/core/states.ts after the numbered migrations, so it never drifts.

CREATE TABLE merchants (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  api_key_hash  text NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  key_rotated_at timestamptz
);

-- Routing snapshots are written by the router; payments keep the version as text without a
-- foreign key so a payment can be stored even if its snapshot was written by another process later.
CREATE TABLE routing_snapshots (
  version     text PRIMARY KEY,
  content     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payments (
  id                 text PRIMARY KEY,
  merchant_id        text NOT NULL REFERENCES merchants (id),
  reference          text NOT NULL,
  amount             bigint NOT NULL CHECK (amount >= 0),
  currency           text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  state              text NOT NULL,
  capture_method     text NOT NULL CHECK (capture_method IN ('manual', 'automatic')),
  allow_partial      boolean NOT NULL,
  amount_authorized  bigint NOT NULL DEFAULT 0 CHECK (amount_authorized >= 0),
  amount_captured    bigint NOT NULL DEFAULT 0 CHECK (amount_captured >= 0),
  amount_refunded    bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0),
  capture_open       boolean NOT NULL DEFAULT false,
  routing            jsonb NOT NULL,
  routing_snapshot   text NOT NULL,
  void_op            jsonb,
  metadata           jsonb NOT NULL DEFAULT '{}'::jsonb,
  version            integer NOT NULL CHECK (version >= 0),
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  deadline_at        timestamptz NOT NULL,
  CONSTRAINT payments_captured_le_authorized CHECK (amount_captured <= amount_authorized),
  CONSTRAINT payments_refunded_le_captured CHECK (amount_refunded <= amount_captured),
  -- Lets tenant-scoped tables reference (merchant_id, id), so no row can point at another merchant's payment.
  CONSTRAINT payments_merchant_id_id_key UNIQUE (merchant_id, id)
);
CREATE INDEX payments_merchant_reference_idx ON payments (merchant_id, reference);
CREATE INDEX payments_merchant_state_idx ON payments (merchant_id, state, id);
-- The recovery sweeper scans in-flight payments oldest first; terminal ones never need it.
CREATE INDEX payments_in_flight_idx ON payments (state, created_at)
  WHERE state NOT IN ('captured', 'voided', 'declined', 'expired', 'failed');

CREATE TABLE payment_attempts (
  id                 text PRIMARY KEY,
  payment_id         text NOT NULL REFERENCES payments (id),
  no                 integer NOT NULL CHECK (no >= 1),
  connector          text NOT NULL,
  status             text NOT NULL,
  provider_ref       text,
  auth_key           text NOT NULL,
  first_sent_at      timestamptz,
  sends              integer NOT NULL CHECK (sends >= 0),
  maybe_reached      boolean NOT NULL,
  not_sent_sends     integer[] NOT NULL DEFAULT '{}',
  prepare_calls      integer NOT NULL CHECK (prepare_calls >= 0),
  queries            integer NOT NULL CHECK (queries >= 0),
  fence_calls        integer NOT NULL CHECK (fence_calls >= 0),
  last_outcome       text,
  proof              text CHECK (proof IN ('declined', 'not_sent', 'fenced')),
  decline_code       text,
  decline_class      text CHECK (decline_class IN ('hard', 'soft')),
  retry_elsewhere    boolean NOT NULL,
  not_sent_reason    text,
  amount_authorized  bigint NOT NULL CHECK (amount_authorized >= 0),
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  CONSTRAINT payment_attempts_payment_no_key UNIQUE (payment_id, no)
);
-- Webhooks and reports name the provider's reference; they must find the attempt fast.
CREATE INDEX payment_attempts_connector_ref_idx ON payment_attempts (connector, provider_ref)
  WHERE provider_ref IS NOT NULL;

CREATE TABLE captures (
  id            text PRIMARY KEY,
  payment_id    text NOT NULL REFERENCES payments (id),
  no            integer NOT NULL CHECK (no >= 1),
  amount        bigint NOT NULL CHECK (amount >= 0),
  final         boolean NOT NULL,
  status        text NOT NULL CHECK (status IN ('requested', 'pending', 'succeeded', 'failed', 'reversed')),
  provider_key  text NOT NULL,
  provider_ref  text,
  calls         integer NOT NULL CHECK (calls >= 0),
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  CONSTRAINT captures_payment_no_key UNIQUE (payment_id, no)
);

CREATE TABLE refunds (
  id            text PRIMARY KEY,
  payment_id    text NOT NULL REFERENCES payments (id),
  no            integer NOT NULL CHECK (no >= 1),
  amount        bigint NOT NULL CHECK (amount >= 0),
  reason        text,
  status        text NOT NULL CHECK (status IN ('requested', 'pending', 'succeeded', 'failed', 'reversed')),
  provider_key  text NOT NULL,
  provider_ref  text,
  calls         integer NOT NULL CHECK (calls >= 0),
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  CONSTRAINT refunds_payment_no_key UNIQUE (payment_id, no)
);

-- Append-only history of every input, applied or ignored (immutability trigger below).
CREATE TABLE payment_transitions (
  id            bigserial PRIMARY KEY,
  payment_id    text NOT NULL REFERENCES payments (id),
  from_state    text NOT NULL,
  to_state      text NOT NULL,
  input         jsonb NOT NULL,
  origin        text NOT NULL CHECK (origin IN ('api', 'worker', 'webhook', 'poll', 'timer', 'operator', 'reconcile')),
  attempt_id    text,
  raw_provider  jsonb,
  outcome       text NOT NULL CHECK (outcome IN ('applied', 'ignored')),
  -- For ignored rows: why (illegal code or noop); for applied rows: the core's note.
  code          text,
  reason        text NOT NULL,
  version       integer NOT NULL,
  at            timestamptz NOT NULL,
  CONSTRAINT payment_transitions_ignored_keeps_state CHECK (outcome = 'applied' OR from_state = to_state)
);
CREATE INDEX payment_transitions_payment_idx ON payment_transitions (payment_id, id);

CREATE TABLE disputes (
  id            text PRIMARY KEY,
  payment_id    text NOT NULL REFERENCES payments (id),
  connector     text NOT NULL,
  provider_ref  text NOT NULL,
  amount        bigint NOT NULL CHECK (amount >= 0),
  currency      text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  status        text NOT NULL,
  reason        text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT disputes_connector_ref_key UNIQUE (connector, provider_ref)
);

-- Effects of a transition, written in its transaction; the relay publishes them after COMMIT.
CREATE TABLE outbox (
  id             bigserial PRIMARY KEY,
  payment_id     text REFERENCES payments (id),
  transition_id  bigint REFERENCES payment_transitions (id),
  kind           text NOT NULL CHECK (kind IN ('provider_call', 'timer', 'merchant_event', 'ledger')),
  payload        jsonb NOT NULL,
  connector      text,
  provider_key   text,
  run_at         timestamptz NOT NULL,
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'dead')),
  attempts       integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  last_error     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  done_at        timestamptz
);
CREATE INDEX outbox_due_idx ON outbox (run_at) WHERE status = 'pending';
CREATE INDEX outbox_payment_idx ON outbox (payment_id, id);

CREATE TABLE idempotency_records (
  merchant_id      text NOT NULL REFERENCES merchants (id),
  key              text NOT NULL,
  fingerprint      text NOT NULL,
  status           text NOT NULL CHECK (status IN ('in_progress', 'completed')),
  locked_until     timestamptz,
  payment_id       text,
  response_status  integer,
  -- Bytes, so a replay is the stored body byte-for-byte.
  response_body    bytea,
  response_headers jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (merchant_id, key),
  CONSTRAINT idempotency_records_payment_fkey FOREIGN KEY (merchant_id, payment_id) REFERENCES payments (merchant_id, id),
  CONSTRAINT idempotency_records_completed_has_response CHECK (status = 'in_progress' OR response_status IS NOT NULL)
);
CREATE INDEX idempotency_records_expires_idx ON idempotency_records (expires_at);

CREATE TABLE inbound_events (
  id                 bigserial PRIMARY KEY,
  connector          text NOT NULL,
  provider_event_id  text,
  raw_body           bytea NOT NULL,
  headers            jsonb NOT NULL DEFAULT '{}'::jsonb,
  verified           boolean NOT NULL,
  outcome            text NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'applied', 'ignored', 'unverified', 'failed')),
  payment_id         text REFERENCES payments (id),
  reason             text,
  received_at        timestamptz NOT NULL DEFAULT now(),
  processed_at       timestamptz,
  CONSTRAINT inbound_events_connector_event_key UNIQUE (connector, provider_event_id)
);
CREATE INDEX inbound_events_pending_idx ON inbound_events (received_at) WHERE outcome = 'pending';

CREATE TABLE webhook_endpoints (
  id              text PRIMARY KEY,
  merchant_id     text NOT NULL REFERENCES merchants (id),
  url             text NOT NULL,
  enabled_events  text[] NOT NULL,
  status          text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_endpoints_merchant_id_id_key UNIQUE (merchant_id, id)
);

CREATE TABLE merchant_events (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  payment_id   text,
  type         text NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT merchant_events_merchant_id_id_key UNIQUE (merchant_id, id),
  CONSTRAINT merchant_events_payment_fkey FOREIGN KEY (merchant_id, payment_id) REFERENCES payments (merchant_id, id)
);
CREATE INDEX merchant_events_payment_idx ON merchant_events (payment_id, created_at);

CREATE TABLE event_deliveries (
  id                text PRIMARY KEY,
  merchant_id       text NOT NULL,
  event_id          text NOT NULL,
  endpoint_id       text NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'dead')),
  attempts          integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  delivered_at      timestamptz,
  CONSTRAINT event_deliveries_event_endpoint_key UNIQUE (event_id, endpoint_id),
  -- Both references carry the merchant: an event is never delivered to another merchant's endpoint.
  CONSTRAINT event_deliveries_event_fkey FOREIGN KEY (merchant_id, event_id) REFERENCES merchant_events (merchant_id, id),
  CONSTRAINT event_deliveries_endpoint_fkey FOREIGN KEY (merchant_id, endpoint_id) REFERENCES webhook_endpoints (merchant_id, id)
);
CREATE INDEX event_deliveries_due_idx ON event_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE ledger_transactions (
  id           text PRIMARY KEY,
  payment_id   text REFERENCES payments (id),
  kind         text NOT NULL,
  -- What caused the posting (e.g. an outbox row): a second posting of the same cause fails.
  source       text NOT NULL UNIQUE,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ledger_entries (
  id              bigserial PRIMARY KEY,
  transaction_id  text NOT NULL REFERENCES ledger_transactions (id),
  account         text NOT NULL,
  direction       text NOT NULL CHECK (direction IN ('debit', 'credit')),
  amount          bigint NOT NULL CHECK (amount > 0),
  currency        text NOT NULL CHECK (currency ~ '^[A-Z]{3}$')
);
CREATE INDEX ledger_entries_transaction_idx ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (account, currency);

CREATE TABLE discrepancies (
  id           text PRIMARY KEY,
  payment_id   text REFERENCES payments (id),
  attempt_id   text,
  kind         text NOT NULL,
  detail       text NOT NULL,
  status       text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
  resolution   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  resolved_at  timestamptz
);
CREATE INDEX discrepancies_open_idx ON discrepancies (created_at) WHERE status = 'open';

-- History tables are append-only: UPDATE, DELETE and TRUNCATE are refused.
CREATE FUNCTION switchyard_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER payment_transitions_append_only BEFORE UPDATE OR DELETE ON payment_transitions
  FOR EACH ROW EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER payment_transitions_no_truncate BEFORE TRUNCATE ON payment_transitions
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_reject_change();

-- Double entry: at COMMIT every ledger transaction has entries, and per currency its debits
-- equal its credits. Deferred, so the entries of one transaction can be inserted one by one.
CREATE FUNCTION switchyard_ledger_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- Through jsonb: plpgsql rejects NEW.transaction_id on a ledger_transactions row even in an untaken branch.
  tx_id text := to_jsonb(NEW) ->> CASE TG_TABLE_NAME WHEN 'ledger_entries' THEN 'transaction_id' ELSE 'id' END;
  bad record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger_entries WHERE transaction_id = tx_id) THEN
    RAISE EXCEPTION 'ledger transaction % has no entries', tx_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
  END IF;
  SELECT currency,
         sum(amount) FILTER (WHERE direction = 'debit') AS debits,
         sum(amount) FILTER (WHERE direction = 'credit') AS credits
    INTO bad
    FROM ledger_entries
   WHERE transaction_id = tx_id
   GROUP BY currency
  HAVING coalesce(sum(amount) FILTER (WHERE direction = 'debit'), 0)
      <> coalesce(sum(amount) FILTER (WHERE direction = 'credit'), 0)
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced in %: debits % <> credits %',
      tx_id, bad.currency, coalesce(bad.debits, 0), coalesce(bad.credits, 0)
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
  END IF;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION switchyard_ledger_balanced();
CREATE CONSTRAINT TRIGGER ledger_transactions_have_entries AFTER INSERT ON ledger_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION switchyard_ledger_balanced();
