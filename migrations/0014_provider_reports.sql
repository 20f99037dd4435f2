-- Reports a provider announces (Adyen REPORT_AVAILABLE, issue 33): one row per (account, file name),
-- recorded once when the verified notification is stored. `content` is the downloaded text (once),
-- `imported_at` says its settlement rows were posted (once). `sequence` is a settlement batch
-- number (a gap is a missing report); `report_day` the day a daily report covers (account zone).
CREATE TABLE IF NOT EXISTS provider_reports (
  connector text NOT NULL,
  file_name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('settlement_batch', 'accounting_daily')),
  sequence integer,
  report_day date,
  announced_at timestamptz NOT NULL,
  downloaded_at timestamptz,
  content text,
  imported_at timestamptz,
  last_error text,
  PRIMARY KEY (connector, file_name)
);
CREATE INDEX IF NOT EXISTS provider_reports_pending ON provider_reports (connector) WHERE content IS NULL OR imported_at IS NULL;
-- A report that never arrived is a reconciliation finding of its own.
ALTER TABLE discrepancies DROP CONSTRAINT IF EXISTS discrepancies_category_check;
ALTER TABLE discrepancies ADD CONSTRAINT discrepancies_category_check
  CHECK (category IN ('missed_notification', 'unapplied_event', 'provider_side_change', 'no_counterpart', 'amount_mismatch', 'missing_report'));
