-- Money guards (issue 29): a ledger transaction names the attempt whose money it moves, so
-- `ledger check` can compare, per attempt, the gross the provider settled with the capture booked
-- for it, and find held-for-release money that stayed open. Rows written before this migration
-- have none (the check then compares them per payment). ADD COLUMN fires no row trigger: the
-- append-only guards stay as they are.
ALTER TABLE ledger_transactions ADD COLUMN IF NOT EXISTS attempt_id text;
CREATE INDEX IF NOT EXISTS ledger_transactions_attempt_idx ON ledger_transactions (attempt_id) WHERE attempt_id IS NOT NULL;
