-- The vault's own database. Card numbers and codes are only ever stored sealed (src/vault/envelope.ts);
-- the columns in the clear are what a merchant may see (brand, last 4, expiry, fingerprint).

-- The fingerprint key, sealed under the vault keys: rotation re-seals it, fingerprints stay the same.
CREATE TABLE vault_secrets (
  name text PRIMARY KEY,
  key_name text NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE payment_methods (
  id text PRIMARY KEY,
  merchant_id text NOT NULL,
  brand text NOT NULL,
  last4 text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
  exp_month smallint NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
  exp_year smallint NOT NULL,
  fingerprint text NOT NULL,
  -- The vault key that wraps pan_ciphertext's data key: rotation re-seals the rows not under the first key.
  key_name text NOT NULL,
  pan_ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX payment_methods_merchant_fingerprint ON payment_methods (merchant_id, fingerprint);
CREATE INDEX payment_methods_key_name ON payment_methods (key_name, id);

-- The card code's own key, sealed under the vault keys. UNLOGGED: never written to the WAL, so it is
-- in no WAL archive, replica or base backup, and once the row is deleted the code sealed under it
-- (card_codes, which is logged) cannot be opened from any copy. PostgreSQL empties the table after a
-- crash: the code is then gone early, which the payment flow handles as for an expired code.
CREATE UNLOGGED TABLE card_code_keys (
  payment_method_id text PRIMARY KEY,
  key_name text NOT NULL,
  wrapped_key bytea NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX card_code_keys_expires_at ON card_code_keys (expires_at);

CREATE TABLE card_codes (
  payment_method_id text PRIMARY KEY REFERENCES payment_methods (id),
  ciphertext bytea NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX card_codes_expires_at ON card_codes (expires_at);

-- Every decrypt of a card: who asked, for what. Append-only (the triggers below refuse the rest).
CREATE TABLE access_log (
  id bigserial PRIMARY KEY,
  payment_method_id text NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('provider_call', 'vault_check', 'vault_rotate')),
  attempt_id text,
  process text NOT NULL,
  fields text[] NOT NULL,
  at timestamptz NOT NULL,
  CHECK ((purpose = 'provider_call') = (attempt_id IS NOT NULL))
);
CREATE INDEX access_log_payment_method ON access_log (payment_method_id, id);

CREATE FUNCTION access_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'access_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER access_log_no_update_delete BEFORE UPDATE OR DELETE ON access_log FOR EACH ROW EXECUTE FUNCTION access_log_append_only();
CREATE TRIGGER access_log_no_truncate BEFORE TRUNCATE ON access_log FOR EACH STATEMENT EXECUTE FUNCTION access_log_append_only();
