-- Why a capture or refund did not happen (declined, rejected as invalid, or never sent), so the
-- payment resource and the operation's answer can say so. NULL while it is in flight, when it
-- succeeded, and on rows written before this column existed. A void's failure lives in void_op.
ALTER TABLE captures ADD COLUMN IF NOT EXISTS failure jsonb;
ALTER TABLE refunds ADD COLUMN IF NOT EXISTS failure jsonb;
