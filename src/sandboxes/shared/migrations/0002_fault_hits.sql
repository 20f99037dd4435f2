-- Which requests each fault hit (their idempotency keys, '' for a request without one): the chaos
-- harness finds the outbox row a fault hit, to run a second execution of it (duplicate_execution).
ALTER TABLE sandbox_faults ADD COLUMN hit_keys text[] NOT NULL DEFAULT '{}';
