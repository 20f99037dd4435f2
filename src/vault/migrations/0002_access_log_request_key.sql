-- The provider request a reveal was for (its idempotency key): a resend of that request must carry
-- exactly the card fields of its first send, and the first reveal for the key says which they were.
ALTER TABLE access_log ADD COLUMN request_key text;
CREATE INDEX access_log_attempt_request ON access_log (payment_method_id, attempt_id, request_key, id) WHERE request_key IS NOT NULL;
