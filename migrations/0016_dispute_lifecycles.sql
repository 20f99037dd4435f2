-- Disputes as each provider runs them (issue 32): the status is our lifecycle (opened,
-- funds_withdrawn, funds_reinstated, won, lost, closed); `withdrawn` is what the provider holds
-- back for the dispute now (its ledger postings must agree: switchyard ledger check); `stage` is the
-- rank of the last provider event applied (an earlier-ranked event delivered late is stale);
-- `provider_status` the provider's own name for it; `fees` the dispute fees the provider charged.
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS withdrawn bigint NOT NULL DEFAULT 0 CHECK (withdrawn >= 0);
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS stage integer NOT NULL DEFAULT 0;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS provider_status text;
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS fees bigint NOT NULL DEFAULT 0;
-- The merchant can no longer defend (Adyen DISPUTE_DEFENSE_PERIOD_ENDED): a withdrawal then ends it lost.
ALTER TABLE disputes ADD COLUMN IF NOT EXISTS defense_ended boolean NOT NULL DEFAULT false;

-- Rows written before: `opened` meant withdrawn (every opening was booked as a withdrawal), `lost`
-- kept it withdrawn, `won` had it back.
UPDATE disputes SET withdrawn = amount, status = 'funds_withdrawn' WHERE status = 'opened';
UPDATE disputes SET withdrawn = amount WHERE status = 'lost';

ALTER TABLE disputes DROP CONSTRAINT IF EXISTS disputes_status_check;
ALTER TABLE disputes ADD CONSTRAINT disputes_status_check
  CHECK (status IN ('opened', 'funds_withdrawn', 'funds_reinstated', 'won', 'lost', 'closed'));
