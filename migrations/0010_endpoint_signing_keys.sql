-- Each merchant webhook endpoint signs with its own key (derived from one secret, never stored per
-- endpoint), so a delivery replayed to another endpoint fails verification there. signing_version
-- picks the key; a rotation bumps it and keeps the previous one published for a while.
-- Endpoints that existed before keep the global key in Switchyard-Signature (global_signature),
-- with the endpoint's own signature beside it, until the merchant rotates (docs/webhooks.md).
ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS signing_version integer NOT NULL DEFAULT 1;
ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS signing_rotated_at timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN IF NOT EXISTS global_signature boolean NOT NULL DEFAULT true;
ALTER TABLE webhook_endpoints ALTER COLUMN global_signature SET DEFAULT false;

-- The secret endpoint keys are derived from when SWITCHYARD_WEBHOOK_KEY_SECRET is unset (local use).
CREATE TABLE IF NOT EXISTS webhook_key_secret (
  id          integer PRIMARY KEY CHECK (id = 1),
  secret      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
