-- Issue 31: operators leave an audit trail.
--
-- operator_audit: every operator action (payment resolutions and overrides, discrepancy
-- resolutions, dead-letter replays, webhook redeliveries, merchant key rotations, sign-in and
-- sign-out), with who, when, what, on what, before, after and the note. Append-only.
CREATE TABLE operator_audit (
  id        bigserial PRIMARY KEY,
  at        timestamptz NOT NULL DEFAULT now(),
  operator  text NOT NULL CHECK (operator ~ '^[a-z][a-z0-9._-]{0,39}$'),
  action    text NOT NULL,
  target    text NOT NULL,
  before    jsonb,
  after     jsonb,
  note      text
);
CREATE INDEX operator_audit_at_idx ON operator_audit (at, id);
CREATE INDEX operator_audit_operator_idx ON operator_audit (operator, at);
CREATE INDEX operator_audit_target_idx ON operator_audit (target, at);
CREATE TRIGGER operator_audit_append_only BEFORE UPDATE OR DELETE ON operator_audit
  FOR EACH ROW EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER operator_audit_no_truncate BEFORE TRUNCATE ON operator_audit
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_reject_change();

-- Dashboard sessions, kept server-side so signing out (or rotating the operator's token) ends
-- them. The cookie holds a random secret; only its SHA-256 is stored. token_fp is an HMAC keyed
-- by the operator's token at sign-in: a session whose operator's token changed since is dead.
CREATE TABLE operator_sessions (
  id          text PRIMARY KEY,
  operator    text NOT NULL,
  token_fp    text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX operator_sessions_operator_idx ON operator_sessions (operator) WHERE revoked_at IS NULL;

-- Discrepancy resolutions are history rows: one per discrepancy (a later change on the
-- provider's side opens a new discrepancy that reopens it). The discrepancy's status,
-- resolution, resolved_at and owner are derived from its resolution row by the trigger below and
-- cannot be written any other way.
CREATE TABLE discrepancy_resolutions (
  id              bigserial PRIMARY KEY,
  discrepancy_id  text NOT NULL UNIQUE REFERENCES discrepancies (id),
  at              timestamptz NOT NULL DEFAULT now(),
  operator        text NOT NULL,
  reason          text,
  note            text NOT NULL,
  evidence        jsonb
);
CREATE TRIGGER discrepancy_resolutions_append_only BEFORE UPDATE OR DELETE ON discrepancy_resolutions
  FOR EACH ROW EXECUTE FUNCTION switchyard_reject_change();
CREATE TRIGGER discrepancy_resolutions_no_truncate BEFORE TRUNCATE ON discrepancy_resolutions
  FOR EACH STATEMENT EXECUTE FUNCTION switchyard_reject_change();

-- Rows resolved before this migration get their history row (before the trigger that applies new ones).
INSERT INTO discrepancy_resolutions (discrepancy_id, at, operator, note)
  SELECT id, coalesce(resolved_at, created_at), owner, coalesce(resolution, '(resolved before the audit trail)')
    FROM discrepancies WHERE status = 'resolved';

CREATE FUNCTION switchyard_discrepancy_resolved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE discrepancies SET status = 'resolved', resolution = NEW.note, resolved_at = NEW.at, owner = NEW.operator
   WHERE id = NEW.discrepancy_id AND status = 'open';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'discrepancy % is not open', NEW.discrepancy_id USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER discrepancy_resolutions_apply AFTER INSERT ON discrepancy_resolutions
  FOR EACH ROW EXECUTE FUNCTION switchyard_discrepancy_resolved();

-- A discrepancy is resolved only by its resolution row: writing the derived columns directly
-- (trigger depth 1, i.e. not from the trigger above) is refused, and so is inserting one resolved.
CREATE FUNCTION switchyard_discrepancy_status_derived() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() > 1 THEN
    RETURN NEW;
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'open' OR NEW.resolution IS NOT NULL OR NEW.resolved_at IS NOT NULL THEN
      RAISE EXCEPTION 'a discrepancy is created open and resolved by a discrepancy_resolutions row'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  ELSIF NEW.status IS DISTINCT FROM OLD.status OR NEW.resolution IS DISTINCT FROM OLD.resolution
        OR NEW.resolved_at IS DISTINCT FROM OLD.resolved_at OR NEW.owner IS DISTINCT FROM OLD.owner THEN
    RAISE EXCEPTION 'discrepancy % status is derived from its resolution row: % refused', OLD.id, TG_OP
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER discrepancies_status_derived BEFORE INSERT OR UPDATE ON discrepancies
  FOR EACH ROW EXECUTE FUNCTION switchyard_discrepancy_status_derived();

