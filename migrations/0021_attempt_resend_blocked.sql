-- The worker refused to resend an attempt's authorization request (unknown{card_code_gone}: the card
-- code its first send carried is destroyed; unknown{key_expired}: past the provider's key retention).
-- Kept on the attempt, so a later query's "not found" does not make the core try the resend again.
ALTER TABLE payment_attempts ADD COLUMN resend_blocked boolean NOT NULL DEFAULT false;
