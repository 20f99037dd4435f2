-- Reconciliation (issue 12): a discrepancy found against a provider has a category, the account
-- and provider reference it was found on, an owner (who is to act on it) and its resolution
-- status (status/resolution above). dedupe_key = category:payment:provider reference, so
-- re-running a window adds nothing. Rows the state machine records itself (late approvals,
-- unresolved captures…) keep category and dedupe_key NULL.
ALTER TABLE discrepancies ADD COLUMN category text
  CHECK (category IN ('missed_notification', 'unapplied_event', 'provider_side_change', 'no_counterpart', 'amount_mismatch'));
ALTER TABLE discrepancies ADD COLUMN connector text;
ALTER TABLE discrepancies ADD COLUMN provider_ref text;
ALTER TABLE discrepancies ADD COLUMN owner text NOT NULL DEFAULT 'operations';
ALTER TABLE discrepancies ADD COLUMN dedupe_key text;
ALTER TABLE discrepancies ADD CONSTRAINT discrepancies_dedupe_key_key UNIQUE (dedupe_key);
