-- Reconciliation findings that stay true as the provider's side changes (issue 30). The dedupe key
-- (category:payment:provider reference:aspect) names what a finding is about; one OPEN row per
-- key (a partial unique index instead of a unique constraint), so a resolved key can be found
-- again. `amounts` holds what the last run saw ({"provider": {...}, "ours": {...}}); a re-run that
-- sees other amounts or another detail updates the open row and appends the previous state to
-- `history`. A resolved key whose provider-side amounts or status differ from those recorded at
-- resolution reopens as a new open row that names the resolved one in `reopens`.
ALTER TABLE discrepancies DROP CONSTRAINT IF EXISTS discrepancies_dedupe_key_key;
CREATE UNIQUE INDEX IF NOT EXISTS discrepancies_open_dedupe_key ON discrepancies (dedupe_key) WHERE status = 'open';
CREATE INDEX IF NOT EXISTS discrepancies_dedupe_key_idx ON discrepancies (dedupe_key, created_at) WHERE dedupe_key IS NOT NULL;
ALTER TABLE discrepancies ADD COLUMN IF NOT EXISTS amounts jsonb;
ALTER TABLE discrepancies ADD COLUMN IF NOT EXISTS history jsonb NOT NULL DEFAULT '[]';
ALTER TABLE discrepancies ADD COLUMN IF NOT EXISTS updated_at timestamptz;
ALTER TABLE discrepancies ADD COLUMN IF NOT EXISTS reopens text REFERENCES discrepancies (id);
