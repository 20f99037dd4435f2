-- Issue 47: a merchant has any number of API keys, each with a role and a mode, rolled without an outage.
--
-- api_keys: one row per key, secret (sk_sy_…) or publishable (pk_sy_…). Only the SHA-256 of the
-- whole key string is kept (hash). A key made since this migration embeds its id
-- (sk_sy_live_<id>_<secret>) and is found by id, then its hash compared in constant time; a key made
-- before it (legacy: sk_sy_<random>, pk_sy_<random>) is found by its hash, as before, and has mode
-- 'any' (it reaches every account, as it always did). role: what a secret key may call
-- (src/api/key-roles.ts); none for a publishable key. expires_at: set by the merchant at creation,
-- or by a roll (the old key works until then); revoked_at: deleted. replaced_by: the key a roll made
-- from this one (a key is rolled once; roll the new one next).
CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL REFERENCES merchants (id),
  kind         text NOT NULL CHECK (kind IN ('secret', 'publishable')),
  role         text CHECK (role IN ('full', 'payments', 'refunds', 'read_only')),
  mode         text NOT NULL CHECK (mode IN ('test', 'live', 'any')),
  name         text NOT NULL,
  hash         text NOT NULL UNIQUE,
  legacy       boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz,
  replaced_by  text REFERENCES api_keys (id),
  CHECK ((kind = 'secret') = (role IS NOT NULL)),
  CHECK ((mode = 'any') = legacy)
);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, created_at);

-- The keys merchants hold today become rows, keyed by the hashes they already have, so they can be
-- listed, rolled and deleted like any other. Their ids are new (key_ and 26 characters of the id alphabet).
INSERT INTO api_keys (id, merchant_id, kind, role, mode, name, hash, legacy, created_at)
  SELECT 'key_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 26), id, 'secret', 'full', 'any', 'secret key', api_key_hash, true,
         coalesce(key_rotated_at, created_at)
    FROM merchants;
INSERT INTO api_keys (id, merchant_id, kind, role, mode, name, hash, legacy, created_at)
  SELECT 'key_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 26), id, 'publishable', NULL, 'any', 'publishable key', publishable_key_hash, true,
         coalesce(publishable_key_rotated_at, created_at)
    FROM merchants WHERE publishable_key_hash IS NOT NULL;

-- The keys live in api_keys alone: a copy left here would keep a deleted key working for any
-- process that still read it.
ALTER TABLE merchants
  DROP COLUMN api_key_hash,
  DROP COLUMN key_rotated_at,
  DROP COLUMN publishable_key_hash,
  DROP COLUMN publishable_key_rotated_at;

