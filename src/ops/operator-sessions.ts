// Dashboard sessions, server-side (operator_sessions, migration 0018). The cookie carries a random
// secret and the table only its SHA-256, so a database read does not yield a usable cookie.
// A session ends when it expires, when its operator signs out (revoked_at), or when the operator's
// token changes (the stored fingerprint of the token it was opened with no longer matches) or the
// operator is no longer configured.

import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../store/db.ts';
import { tokenFingerprint } from './operators.ts';
import type { Operator, Operators } from './operators.ts';

export const SESSION_MS = 12 * 3_600_000;

const idOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export async function openSession(db: DbOrTx, op: Operator, now: Date): Promise<{ secret: string; id: string; expiresAt: Date }> {
  const secret = randomBytes(32).toString('base64url');
  const id = idOf(secret);
  const expiresAt = new Date(now.getTime() + SESSION_MS);
  await db.execute(sql`INSERT INTO operator_sessions (id, operator, token_fp, created_at, expires_at)
    VALUES (${id}, ${op.name}, ${tokenFingerprint(op)}, ${now.toISOString()}::timestamptz, ${expiresAt.toISOString()}::timestamptz)`);
  return { secret, id, expiresAt };
}

export interface LiveSession {
  readonly id: string;
  readonly operator: Operator;
}

/** The live session this cookie secret opens, or null (unknown, expired, revoked, token rotated). */
export async function liveSession(db: DbOrTx, operators: Operators, secret: string, now: Date): Promise<LiveSession | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  const id = idOf(secret);
  const r = await db.execute<{ operator: string; token_fp: string }>(sql`
    SELECT operator, token_fp FROM operator_sessions
     WHERE id = ${id} AND revoked_at IS NULL AND expires_at > ${now.toISOString()}::timestamptz`);
  const row = r.rows[0];
  if (row === undefined) return null;
  const op = operators.byName(row.operator);
  if (op === null || tokenFingerprint(op) !== row.token_fp) return null;
  return { id, operator: op };
}

/** Ends the session; false when it was not live. */
export async function revokeSession(db: DbOrTx, id: string, now: Date): Promise<boolean> {
  const r = await db.execute(sql`UPDATE operator_sessions SET revoked_at = ${now.toISOString()}::timestamptz WHERE id = ${id} AND revoked_at IS NULL`);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Sessions opened under a token that is no longer the operator's are marked revoked, so the table
 * says what the check already enforces (run at start-up: a rotated token arrives with a restart).
 */
export async function revokeRotatedSessions(db: DbOrTx, operators: Operators, now: Date): Promise<number> {
  const live = await db.execute<{ id: string; operator: string; token_fp: string }>(sql`SELECT id, operator, token_fp FROM operator_sessions WHERE revoked_at IS NULL`);
  let n = 0;
  for (const s of live.rows) {
    const op = operators.byName(s.operator);
    if (op === null || tokenFingerprint(op) !== s.token_fp) n += (await revokeSession(db, s.id, now)) ? 1 : 0;
  }
  return n;
}
