-- Disputes the merchant can act on (issue 48). A dispute names its merchant (listed per merchant,
-- newest first, without a join), the date its evidence is due (from the provider's events), and
-- what the merchant did about it through the API: the evidence sent (when; staged or submitted;
-- the defense reason) or its acceptance. The provider's events still decide its status and money.
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS merchant_id text REFERENCES merchants (id);
UPDATE disputes d SET merchant_id = p.merchant_id FROM payments p WHERE p.id = d.payment_id AND d.merchant_id IS NULL;
ALTER TABLE disputes ALTER COLUMN merchant_id SET NOT NULL;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS evidence_due_by timestamptz;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS evidence_sent_at timestamptz;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS evidence_submitted_at timestamptz;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS defense_reason text;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS accepted_at timestamptz;
CREATE INDEX IF NOT EXISTS disputes_merchant_created_idx ON disputes (merchant_id, created_at DESC, id DESC);

-- Files a merchant uploads as dispute evidence (POST /v1/files): the bytes are kept here, in the
-- gateway's database, until they are sent to a provider with the evidence (each provider keeps
-- its own copy). PDF, JPEG or PNG by content, at most 4 MB.
CREATE TABLE IF NOT EXISTS files (
  id          text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  purpose     text NOT NULL CHECK (purpose IN ('dispute_evidence')),
  type        text NOT NULL CHECK (type IN ('pdf', 'jpeg', 'png')),
  size        integer NOT NULL CHECK (size > 0 AND size <= 4194304),
  sha256      text NOT NULL,
  filename    text,
  content     bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK (octet_length(content) = size)
);
CREATE INDEX IF NOT EXISTS files_merchant_created_idx ON files (merchant_id, created_at DESC, id DESC);
