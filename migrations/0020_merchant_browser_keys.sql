-- Issue 44: what a merchant's customers' browsers may use.
--
-- publishable_key_hash: SHA-256 of the merchant's publishable key (pk_sy_…), which opens only
-- POST /v1/tokens and the hosted card form; null for merchants created before it (rotate it in
-- with `switchyard merchants rotate-publishable-key`). allowed_origins: the browser origins
-- (scheme://host[:port]) that may call POST /v1/tokens and frame the form; empty: none.
-- allow_raw_cards: an operator let this merchant send card numbers from its own servers
-- (POST /v1/payment_methods).
ALTER TABLE merchants
  ADD COLUMN publishable_key_hash text UNIQUE,
  ADD COLUMN publishable_key_rotated_at timestamptz,
  ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}',
  ADD COLUMN allow_raw_cards boolean NOT NULL DEFAULT false;

-- How many payment methods a merchant stored in the current clock hour (SWITCHYARD_TOKENS_PER_HOUR):
-- one row per merchant, reset when the hour changes. No card data: a count.
CREATE TABLE payment_method_quota (
  merchant_id  text PRIMARY KEY REFERENCES merchants (id),
  window_start timestamptz NOT NULL,
  issued       integer NOT NULL CHECK (issued >= 0)
);
