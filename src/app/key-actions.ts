// What the merchant API and the operator CLI do to API keys: create, roll, revoke. Each runs in one
// transaction under the merchant's lock and writes its audit row there (src/ops/audit.ts), so a key
// change and its record commit together. An audit row describes the key (id, kind, role, mode, name,
// times), never its secret. A refusal writes nothing and says why (the callers map it to a problem or
// a CLI error).

import { isKeyActive, lastFullKeyMode, MAX_ROLL_EXPIRES_IN_S } from '../core/api-keys.ts';
import type { KeyMode } from '../core/api-keys.ts';
import { recordAudit } from '../ops/audit.ts';
import type { AuditAction } from '../ops/audit.ts';
import { findKey, issueKey, listKeys, loadKey, lockMerchantKeys, revokeKey, rollKey } from '../store/api-keys.ts';
import type { ApiKey, IssueKey } from '../store/api-keys.ts';
import type { DbOrTx } from '../store/db.ts';

/** Who acts: an operator by name (CLI), or the merchant through one of its keys (API). */
export type KeyActor = { readonly operator: string } | { readonly keyId: string };

/** Working keys a merchant may hold at once; a roll's old key counts until it expires. */
export const MAX_ACTIVE_KEYS = 100;

export type KeyRefusal =
  | { readonly refused: 'merchant_not_found' }
  | { readonly refused: 'not_found' }
  | { readonly refused: 'key_limit_reached'; readonly limit: number }
  | { readonly refused: 'expired'; readonly at: Date }
  | { readonly refused: 'already_rolled'; readonly replacedBy: string }
  | { readonly refused: 'mode_required' }
  | { readonly refused: 'mode_mismatch'; readonly mode: KeyMode }
  | { readonly refused: 'last_full_key'; readonly mode: KeyMode };

export type Issued = { readonly refused?: undefined; readonly key: ApiKey; readonly secret: string | null };

/** What an audit row says of a key: never its secret. */
export function keyAuditSummary(k: ApiKey): Record<string, unknown> {
  return {
    merchant_id: k.merchantId, kind: k.kind, role: k.role, mode: k.mode, name: k.name, legacy: k.legacy,
    expires_at: k.expiresAt?.toISOString() ?? null, revoked_at: k.revokedAt?.toISOString() ?? null, replaced_by: k.replacedBy,
  };
}

async function audit(tx: DbOrTx, actor: KeyActor, action: AuditAction, target: string, at: Date, before: ApiKey | null, after: ApiKey, note?: string): Promise<void> {
  await recordAudit(tx, {
    operator: 'operator' in actor ? actor.operator : actor.keyId, action, target, at,
    before: before === null ? null : keyAuditSummary(before), after: keyAuditSummary(after),
    note: note ?? ('operator' in actor ? 'switchyard merchants keys (CLI)' : `the merchant API, with key ${actor.keyId}`),
  });
}

/** What a key action creates: the store's IssueKey (one shape for both). */
export type CreateKey = IssueKey;

export async function createKey(db: DbOrTx, actor: KeyActor, c: CreateKey): Promise<Issued | KeyRefusal> {
  if ((c.kind === 'secret') !== (c.role !== null)) throw new Error('a secret key has a role; a publishable key has none');
  return db.transaction(async (tx) => {
    if (!(await lockMerchantKeys(tx, c.merchantId))) return { refused: 'merchant_not_found' } as const;
    if (c.id !== undefined) {
      const existing = await loadKey(tx, c.merchantId, c.id);
      if (existing !== null) return { key: existing, secret: null };
    }
    if ((await listKeys(tx, c.merchantId, c.now)).length >= MAX_ACTIVE_KEYS) return { refused: 'key_limit_reached', limit: MAX_ACTIVE_KEYS } as const;
    const issued = await issueKey(tx, c);
    if (issued.secret !== null) await audit(tx, actor, 'api_key.create', issued.key.id, c.now, null, issued.key);
    return issued;
  });
}

export interface RollKey {
  readonly keyId: string;
  /** The API's merchant: another merchant's key is not found. Absent for operators. */
  readonly merchantId?: string;
  readonly expiresInS: number;
  /** Only for a legacy key (mode any): the mode its successor gets. */
  readonly mode?: KeyMode;
  readonly now: Date;
  readonly newId?: string;
}

export async function rollKeyAction(db: DbOrTx, actor: KeyActor, r: RollKey): Promise<(Issued & { readonly old: ApiKey }) | KeyRefusal> {
  if (!Number.isInteger(r.expiresInS) || r.expiresInS < 0 || r.expiresInS > MAX_ROLL_EXPIRES_IN_S) throw new Error(`expires_in out of range: ${r.expiresInS}`);
  return db.transaction(async (tx) => {
    const seen = await findKey(tx, r.keyId);
    if (seen === null || (r.merchantId !== undefined && seen.merchantId !== r.merchantId)) return { refused: 'not_found' } as const;
    await lockMerchantKeys(tx, seen.merchantId);
    const old = (await loadKey(tx, seen.merchantId, r.keyId))!;
    if (old.revokedAt !== null) return { refused: 'not_found' } as const;
    if (old.replacedBy !== null) {
      // The same request again (its first run committed): the key it made, without the secret.
      if (r.newId !== undefined && old.replacedBy === r.newId) return { key: (await loadKey(tx, old.merchantId, r.newId))!, secret: null, old };
      return { refused: 'already_rolled', replacedBy: old.replacedBy } as const;
    }
    if (!isKeyActive(old, r.now)) return { refused: 'expired', at: old.expiresAt! } as const;
    let mode: KeyMode;
    if (old.mode === 'any') {
      if (r.mode === undefined) return { refused: 'mode_required' } as const;
      mode = r.mode;
    } else {
      if (r.mode !== undefined && r.mode !== old.mode) return { refused: 'mode_mismatch', mode: old.mode } as const;
      mode = old.mode;
    }
    const rolled = await rollKey(tx, old, { expiresInS: r.expiresInS, now: r.now, mode, ...(r.newId === undefined ? {} : { id: r.newId }) });
    await audit(tx, actor, 'api_key.roll', old.id, r.now, old, rolled.old, `rolled to ${rolled.key.id}; the old key works until ${rolled.old.expiresAt!.toISOString()}`);
    await audit(tx, actor, 'api_key.create', rolled.key.id, r.now, null, rolled.key, `made by rolling ${old.id}`);
    return rolled;
  });
}

export interface RevokeKey {
  readonly keyId: string;
  readonly merchantId?: string;
  readonly now: Date;
}

/** Deletes a key (it answers 401 from now on); never the merchant's last working full key of a mode. */
export async function revokeKeyAction(db: DbOrTx, actor: KeyActor, r: RevokeKey): Promise<{ readonly refused?: undefined; readonly key: ApiKey } | KeyRefusal> {
  return db.transaction(async (tx) => {
    const seen = await findKey(tx, r.keyId);
    if (seen === null || (r.merchantId !== undefined && seen.merchantId !== r.merchantId)) return { refused: 'not_found' } as const;
    await lockMerchantKeys(tx, seen.merchantId);
    const before = (await loadKey(tx, seen.merchantId, r.keyId))!;
    if (before.revokedAt !== null) return { refused: 'not_found' } as const;
    const last = lastFullKeyMode(await listKeys(tx, seen.merchantId, r.now), before, r.now);
    if (last !== null) return { refused: 'last_full_key', mode: last } as const;
    const key = (await revokeKey(tx, r.keyId, r.now))!;
    await audit(tx, actor, 'api_key.revoke', key.id, r.now, before, key);
    return { key };
  });
}
