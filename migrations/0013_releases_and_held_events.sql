-- The release of an approval the gateway does not keep (a late or partial approval): a numbered
-- operation of its own (void, or refund under automatic capture) with its key, its status at the
-- provider, its own reference (the release refund's record: its events and report rows match it),
-- and its calls. NULL for every other attempt, and for attempts written before it existed (the
-- loader reads a `releasing` attempt without one as release no. <attempt no>, its old key).
ALTER TABLE payment_attempts ADD COLUMN IF NOT EXISTS release_op jsonb;

-- A provider event held past its bound (a refund reversal whose success never arrived) becomes a
-- discrepancy for reconciliation with the event attached: the normalized event and its inbox id.
ALTER TABLE discrepancies ADD COLUMN IF NOT EXISTS event jsonb;
