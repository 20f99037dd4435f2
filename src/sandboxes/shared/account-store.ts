// One sandbox account's rows in the sandbox database: its clock, settings, queued faults,
// idempotency keys, provider objects and webhook events. A provider request that changes state
// runs as one transaction (a Unit): advisory locks on what it touches (its idempotency key, a
// merchant reference), claim of the key and load of the objects with row locks in one statement,
// the provider's own synchronous logic in memory, then one statement writing every change, the
// events it emitted and the key's stored answer. Four round trips after BEGIN for a keyed POST.

import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { SandboxClock } from './clock.ts';
import type { FaultOp, WebhookSettings } from './control.ts';
import { EVENTS_CHANNEL } from './database.ts';
import type { SandboxDatabase } from './database.ts';

export interface AccountRow {
  readonly clockOffsetMs: number;
  readonly webhookSettings: Partial<WebhookSettings>;
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface StoredObject {
  readonly id: string;
  readonly createdMs: number;
  readonly reference: string | null;
  readonly doc: unknown;
}

/** What a request reads: objects by id, by an alias (a child's id) or by merchant reference; fences by reference. */
export interface LoadSpec {
  readonly ids?: readonly string[];
  readonly aliases?: readonly string[];
  readonly references?: readonly string[];
  readonly fences?: readonly string[];
}

export interface StoredReply {
  readonly status: number;
  /** The exact bytes first sent; replays send them again. */
  readonly body: string;
  readonly requestId?: string;
}

export type KeyVerdict =
  | { readonly kind: 'execute' }
  | { readonly kind: 'replay'; readonly reply: StoredReply }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'in_flight' };

export interface KeyClaim {
  readonly key: string;
  /** Compared on reuse (Stripe); null: no comparison (Adyen documents none). */
  readonly fingerprint: string | null;
}

export interface NewEvent {
  readonly eventId: string;
  readonly type: string;
  readonly body?: string;
  readonly items?: readonly unknown[];
}

export interface Changes {
  readonly objects?: readonly StoredObject[];
  readonly aliases?: readonly { readonly alias: string; readonly objectId: string }[];
  readonly fences?: readonly { readonly reference: string; readonly psp: string }[];
  readonly bookings?: readonly { readonly bookedMs: number; readonly doc: unknown }[];
  readonly events?: readonly NewEvent[];
  /** Extra wait before the events are due (Adyen batching window). */
  readonly eventDelayMs?: number;
  /** The key's fate: its answer stored, or released (validation failures store nothing). */
  readonly key?: { readonly key: string; readonly store: StoredReply } | { readonly key: string; readonly release: true };
}

export interface Loaded {
  readonly verdict: KeyVerdict;
  readonly objects: readonly StoredObject[];
  readonly fences: readonly string[];
}

/** A queued fault as the control API lists it: `hitKeys` are the idempotency keys of the requests it hit ('' for none). */
export interface FaultRecord {
  readonly id: number;
  readonly op: string;
  readonly mode: string;
  readonly remaining: number;
  readonly hitKeys: readonly string[];
}

export interface FiredFaultRow {
  readonly op: FaultOp;
  readonly mode: string;
  readonly latencyMs: number;
  readonly process: 'before' | 'after';
}

/** A held key outlives its own request's wait by this much before another request may take it over. */
const HELD_KEY_GRACE_MS = 30_000;
const PRUNE_EVERY = 1_000;

interface ObjectJson {
  id: string;
  created_ms: string | number;
  reference: string | null;
  doc: unknown;
}

interface ClaimJson {
  claimed: boolean;
  state: 'in_flight' | 'done';
  fingerprint: string | null;
  reply: StoredReply | null;
}

// The account's own key lifetime when one is set (control API `POST /_sandbox/{account}/idempotency`:
// the chaos harness's key_expiry gives an account a lifetime of seconds), else the provider's ($7).
const KEY_TTL = `coalesce((SELECT (a.settings->>'key_ttl_ms')::bigint FROM sandbox_accounts a WHERE a.account = $1), $7::bigint)`;

// ON CONFLICT cannot name a computed column, so "expired" is spelled out where it is used: a done
// key older than the retention (KEY_TTL), or an in-flight key whose holder's lease ran out (it died).
const EXPIRED = `((k.state = 'done' AND EXCLUDED.first_seen_ms - k.first_seen_ms >= ${KEY_TTL}) OR (k.state = 'in_flight' AND k.lease_until < now()))`;

// Always inserts or updates (a no-op update when the key is live), so RETURNING shows the latest
// committed row and the row stays locked to the end of the transaction.
const CLAIM = `
  INSERT INTO sandbox_idempotency_keys AS k (account, key, state, fingerprint, first_seen_ms, lease_until, token)
  SELECT $1, $2::text, 'in_flight', $3, $4, now() + $5::bigint * interval '1 millisecond', $6 WHERE $2::text IS NOT NULL
  ON CONFLICT (account, key) DO UPDATE SET
    state = CASE WHEN ${EXPIRED} THEN 'in_flight' ELSE k.state END,
    fingerprint = CASE WHEN ${EXPIRED} THEN EXCLUDED.fingerprint ELSE k.fingerprint END,
    first_seen_ms = CASE WHEN ${EXPIRED} THEN EXCLUDED.first_seen_ms ELSE k.first_seen_ms END,
    lease_until = CASE WHEN ${EXPIRED} THEN EXCLUDED.lease_until ELSE k.lease_until END,
    reply = CASE WHEN ${EXPIRED} THEN NULL ELSE k.reply END,
    token = CASE WHEN ${EXPIRED} THEN EXCLUDED.token ELSE k.token END
  RETURNING k.token = $6 AS claimed, k.state, k.fingerprint, k.reply`;

const CLAIM_AND_LOAD = `
  WITH claim AS (${CLAIM}),
  objs AS (
    SELECT o.id, o.created_ms, o.reference, o.doc FROM sandbox_objects o
    WHERE o.account = $1 AND (o.id = ANY($8::text[]) OR o.reference = ANY($9::text[])
      OR o.id IN (SELECT a.object_id FROM sandbox_aliases a WHERE a.account = $1 AND a.alias = ANY($10::text[])))
    FOR UPDATE
  )
  SELECT (SELECT row_to_json(claim) FROM claim) AS claim,
         (SELECT coalesce(json_agg(objs ORDER BY objs.created_ms, objs.id), '[]'::json) FROM objs) AS objects,
         (SELECT coalesce(json_agg(f.reference), '[]'::json) FROM sandbox_fences f WHERE f.account = $1 AND f.reference = ANY($11::text[])) AS fences`;

const READ = `
  SELECT (SELECT clock_offset_ms FROM sandbox_accounts WHERE account = $1) AS clock_offset_ms,
         (SELECT coalesce(json_agg(o ORDER BY o.created_ms, o.id), '[]'::json) FROM (
            SELECT o.id, o.created_ms, o.reference, o.doc FROM sandbox_objects o
            WHERE o.account = $1 AND ($6 OR o.id = ANY($2::text[]) OR o.reference = ANY($3::text[])
              OR o.id IN (SELECT a.object_id FROM sandbox_aliases a WHERE a.account = $1 AND a.alias = ANY($4::text[])))
              AND ($7::bigint IS NULL OR o.created_ms >= $7) AND ($8::bigint IS NULL OR o.created_ms <= $8)) o) AS objects,
         (SELECT coalesce(json_agg(f.reference), '[]'::json) FROM sandbox_fences f WHERE f.account = $1 AND f.reference = ANY($5::text[])) AS fences`;

const SAVE = `
  WITH objs AS (
    INSERT INTO sandbox_objects (account, id, created_ms, reference, doc)
    SELECT $1, o.id, o.created_ms, o.reference, o.doc FROM jsonb_to_recordset($2::jsonb) AS o(id text, created_ms bigint, reference text, doc jsonb)
    ON CONFLICT (account, id) DO UPDATE SET doc = EXCLUDED.doc RETURNING 1),
  aliases AS (
    INSERT INTO sandbox_aliases (account, alias, object_id)
    SELECT $1, a.alias, a.object_id FROM jsonb_to_recordset($3::jsonb) AS a(alias text, object_id text) ON CONFLICT DO NOTHING RETURNING 1),
  fences AS (
    INSERT INTO sandbox_fences (account, reference, psp)
    SELECT $1, f.reference, f.psp FROM jsonb_to_recordset($4::jsonb) AS f(reference text, psp text) ON CONFLICT DO NOTHING RETURNING 1),
  bookings AS (
    INSERT INTO sandbox_bookings (account, booked_ms, doc)
    SELECT $1, (b.v->>'booked_ms')::bigint, b.v->'doc' FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS b(v, n) ORDER BY b.n RETURNING 1),
  events AS (
    INSERT INTO sandbox_events (account, event_id, type, body, items, due_at, done_at, created_ms)
    SELECT $1, e.v->>'event_id', e.v->>'type', e.v->>'body', nullif(e.v->'items', 'null'::jsonb), now() + $6::bigint * interval '1 millisecond',
           CASE WHEN $11::boolean THEN now() END, $12::bigint
    FROM jsonb_array_elements($7::jsonb) WITH ORDINALITY AS e(v, n) ORDER BY e.n RETURNING 1),
  stored AS (
    UPDATE sandbox_idempotency_keys SET state = 'done', reply = $9::jsonb, lease_until = NULL
    WHERE account = $1 AND key = $8::text AND $10::text = 'store' RETURNING 1),
  released AS (
    DELETE FROM sandbox_idempotency_keys WHERE account = $1 AND key = $8::text AND $10::text = 'release' AND state = 'in_flight' RETURNING 1)
  SELECT CASE WHEN NOT $11::boolean AND EXISTS (SELECT 1 FROM events) THEN pg_notify('${EVENTS_CHANNEL}', $1) END AS notified`;

/** A 64-bit advisory lock id for one thing this account's requests must not do at the same time. */
function lockId(account: string, name: string): string {
  return createHash('sha256').update(`${account}\u0000${name}`).digest().readBigInt64BE(0).toString();
}

function objectOf(row: ObjectJson): StoredObject {
  return { id: row.id, createdMs: Number(row.created_ms), reference: row.reference, doc: row.doc };
}

function verdictOf(claim: ClaimJson | null, fingerprint: string | null): KeyVerdict {
  if (claim === null || claim.claimed) return { kind: 'execute' };
  if (claim.state === 'in_flight') return { kind: 'in_flight' };
  if (claim.fingerprint !== null && fingerprint !== null && claim.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (claim.reply === null) return { kind: 'in_flight' };
  return { kind: 'replay', reply: claim.reply };
}

function accountOf(row: { clock_offset_ms: string | number; webhook_settings: Partial<WebhookSettings>; settings: Record<string, unknown> }): AccountRow {
  return { clockOffsetMs: Number(row.clock_offset_ms), webhookSettings: row.webhook_settings, settings: row.settings };
}

/** The transaction one provider request runs in. */
export interface Unit {
  readonly account: AccountRow;
  /** Sandbox time when the unit began (after its locks were granted). */
  readonly nowMs: number;
  /** Claims the key (unless null) and loads what the request touches, row-locked. `heldToken`: the key was held before a delay. */
  load(claim: KeyClaim | null, spec: LoadSpec, heldToken?: string): Promise<Loaded>;
  save(changes: Changes): Promise<void>;
}

export interface AccountStoreOptions {
  readonly keyTtlMs: number;
  readonly webhookSettings?: Partial<WebhookSettings>;
  readonly settings?: Readonly<Record<string, unknown>>;
}

export class AccountStore {
  private claims = 0;
  private lastAccount: AccountRow = { clockOffsetMs: 0, webhookSettings: {}, settings: {} };

  private constructor(
    private readonly db: SandboxDatabase,
    readonly account: string,
    private readonly clock: SandboxClock,
    private readonly options: AccountStoreOptions,
  ) {}

  /** Creates the account's row when it is new; settings given here override the stored ones key by key. */
  static async open(db: SandboxDatabase, account: string, type: string, clock: SandboxClock, options: AccountStoreOptions): Promise<AccountStore> {
    const store = new AccountStore(db, account, clock, options);
    const { rows } = await db.pool.query<{ type: string; clock_offset_ms: string; webhook_settings: Partial<WebhookSettings>; settings: Record<string, unknown> }>(
      `INSERT INTO sandbox_accounts (account, type, webhook_settings, settings) VALUES ($1, $2, $3::jsonb, $4::jsonb)
       ON CONFLICT (account) DO UPDATE SET webhook_settings = sandbox_accounts.webhook_settings || EXCLUDED.webhook_settings,
                                           settings = sandbox_accounts.settings || EXCLUDED.settings
       RETURNING type, clock_offset_ms, webhook_settings, settings`,
      [account, type, JSON.stringify(options.webhookSettings ?? {}), JSON.stringify(options.settings ?? {})],
    );
    const row = rows[0]!;
    if (row.type !== type) throw new Error(`sandbox account ${account} is a ${row.type} sandbox in ${db.url.replace(/\/\/[^@]*@/, '//')}, not ${type}`);
    store.remember(accountOf(row));
    return store;
  }

  /** The account row as last read (clock offset, settings). */
  get current(): AccountRow {
    return this.lastAccount;
  }

  async refresh(): Promise<AccountRow> {
    const { rows } = await this.db.pool.query('SELECT clock_offset_ms, webhook_settings, settings FROM sandbox_accounts WHERE account = $1', [this.account]);
    return this.remember(accountOf(rows[0] as Parameters<typeof accountOf>[0]));
  }

  private remember(row: AccountRow): AccountRow {
    this.lastAccount = row;
    this.clock.sync(row.clockOffsetMs);
    return row;
  }

  async advanceClock(seconds: number): Promise<void> {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`clock can only move forward, got ${seconds}`);
    const { rows } = await this.db.pool.query<{ clock_offset_ms: string }>(
      'UPDATE sandbox_accounts SET clock_offset_ms = clock_offset_ms + $2 WHERE account = $1 RETURNING clock_offset_ms',
      [this.account, Math.round(seconds * 1000)],
    );
    this.clock.sync(Number(rows[0]!.clock_offset_ms));
  }

  async updateWebhookSettings(patch: Partial<WebhookSettings>): Promise<Partial<WebhookSettings>> {
    const { rows } = await this.db.pool.query<{ webhook_settings: Partial<WebhookSettings> }>(
      'UPDATE sandbox_accounts SET webhook_settings = webhook_settings || $2::jsonb WHERE account = $1 RETURNING webhook_settings',
      [this.account, JSON.stringify(patch)],
    );
    return rows[0]!.webhook_settings;
  }

  async updateSettings(patch: Readonly<Record<string, unknown>>): Promise<void> {
    await this.db.pool.query('UPDATE sandbox_accounts SET settings = settings || $2::jsonb WHERE account = $1', [this.account, JSON.stringify(patch)]);
  }

  /** Returns the fault's id (GET .../faults lists it under that id). */
  async scheduleFault(spec: { op: FaultOp; mode: string; count: number; latencyMs?: number; process?: 'before' | 'after' }): Promise<number> {
    const { rows } = await this.db.pool.query<{ id: string }>('INSERT INTO sandbox_faults (account, op, mode, latency_ms, process, remaining) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id', [
      this.account, spec.op, spec.mode, spec.latencyMs ?? 0, spec.process ?? 'before', spec.count,
    ]);
    return Number(rows[0]!.id);
  }

  /** Consumes one firing of the oldest fault for `op` (null: a read, only `any` faults hit it). */
  async takeFault(op: FaultOp | null, alsoOp: FaultOp | null = null, idempotencyKey: string | null = null): Promise<FiredFaultRow | null> {
    const { rows } = await this.db.pool.query<{ op: FaultOp; mode: string; latency_ms: number; process: 'before' | 'after' }>({
      name: 'sbx_take_fault_3',
      text: `UPDATE sandbox_faults SET remaining = remaining - 1, hit_keys = hit_keys || coalesce($4::text, '')
             WHERE id = (SELECT id FROM sandbox_faults WHERE account = $1 AND remaining > 0 AND (op = 'any' OR op = $2::text OR op = $3::text) ORDER BY id LIMIT 1) AND remaining > 0
             RETURNING op, mode, latency_ms, process`,
      values: [this.account, op, alsoOp, idempotencyKey],
    });
    const row = rows[0];
    return row === undefined ? null : { op: row.op, mode: row.mode, latencyMs: row.latency_ms, process: row.process };
  }

  async listFaults(): Promise<FaultRecord[]> {
    const { rows } = await this.db.pool.query<{ id: string; op: string; mode: string; remaining: number; hit_keys: string[] }>(
      'SELECT id, op, mode, remaining, hit_keys FROM sandbox_faults WHERE account = $1 ORDER BY id',
      [this.account],
    );
    return rows.map((r) => ({ id: Number(r.id), op: r.op, mode: r.mode, remaining: r.remaining, hitKeys: r.hit_keys }));
  }

  /** Drops every queued fault; returns how many firings were still pending. */
  async clearFaults(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: string | null }>(
      'WITH gone AS (DELETE FROM sandbox_faults WHERE account = $1 RETURNING remaining) SELECT sum(remaining) AS n FROM gone',
      [this.account],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async pendingFaults(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: string | null }>('SELECT sum(remaining) AS n FROM sandbox_faults WHERE account = $1', [this.account]);
    return Number(rows[0]?.n ?? 0);
  }

  /** A read outside any transaction (GETs): the clock is refreshed by the same statement. */
  async read(spec: LoadSpec & { all?: boolean; fromMs?: number; toMs?: number }): Promise<{ objects: StoredObject[]; fences: string[] }> {
    const { rows } = await this.db.pool.query<{ clock_offset_ms: string; objects: ObjectJson[]; fences: string[] }>({
      name: 'sbx_read',
      text: READ,
      values: [this.account, spec.ids ?? [], spec.references ?? [], spec.aliases ?? [], spec.fences ?? [], spec.all === true, spec.fromMs ?? null, spec.toMs ?? null],
    });
    const row = rows[0]!;
    this.clock.sync(Number(row.clock_offset_ms));
    return { objects: row.objects.map(objectOf), fences: row.fences };
  }

  /** Stripe: the bodies of the events emitted in [sinceMs, untilMs] (sandbox clock), newest first. */
  async loggedEvents(sinceMs: number, untilMs: number | null = null): Promise<{ id: string; created: number; type: string; body: string }[]> {
    const { rows } = await this.db.pool.query<{ event_id: string; type: string; body: string; created_ms: string }>(
      `SELECT event_id, type, body, created_ms FROM sandbox_events
       WHERE account = $1 AND body IS NOT NULL AND created_ms >= $2 AND ($3::bigint IS NULL OR created_ms <= $3) ORDER BY created_ms DESC, id DESC`,
      [this.account, sinceMs, untilMs],
    );
    return rows.map((r) => ({ id: r.event_id, created: Math.floor(Number(r.created_ms) / 1000), type: r.type, body: r.body }));
  }

  async bookingsBetween(fromMs: number, toMs: number): Promise<unknown[]> {
    const { rows } = await this.db.pool.query<{ doc: unknown }>('SELECT doc FROM sandbox_bookings WHERE account = $1 AND booked_ms >= $2 AND booked_ms < $3 ORDER BY id', [
      this.account, fromMs, toMs,
    ]);
    return rows.map((r) => r.doc);
  }

  /**
   * Claims a key outside a transaction and commits it as in flight, for a request that waits
   * before executing (a latency fault): a same-key request in that time sees "in progress".
   */
  async holdKey(claim: KeyClaim, holdMs: number): Promise<{ verdict: KeyVerdict; token: string }> {
    const token = randomBytes(9).toString('base64url');
    const { rows } = await this.db.pool.query<ClaimJson>(CLAIM, this.claimValues(claim, token, holdMs + HELD_KEY_GRACE_MS));
    return { verdict: verdictOf(rows[0] ?? null, claim.fingerprint), token };
  }

  private claimValues(claim: KeyClaim | null, token: string, leaseMs: number): unknown[] {
    if (claim !== null && ++this.claims % PRUNE_EVERY === 0) void this.prune();
    return [this.account, claim?.key ?? null, claim?.fingerprint ?? null, this.clock.nowMs(), leaseMs, token, this.options.keyTtlMs];
  }

  private async prune(): Promise<void> {
    await this.db.pool
      .query(`DELETE FROM sandbox_idempotency_keys WHERE account = $1 AND state = 'done' AND first_seen_ms <= $2`, [this.account, this.clock.nowMs() - this.options.keyTtlMs])
      .catch(() => undefined);
  }

  /**
   * Runs `work` in one transaction holding advisory locks on `locks` (idempotency keys, references).
   * `busy`: a lock taken without waiting; when another transaction holds it (a same-key request
   * that has not committed), nothing runs and `busy.answer()` is the result.
   */
  async unit<T>(locks: readonly string[], work: (unit: Unit) => Promise<T>, busy?: { readonly lock: string; readonly key: string; readonly answer: () => T }): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.db.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const ids = [...new Set(locks)].filter((l) => l !== busy?.lock).map((l) => lockId(this.account, l));
        const { rows } = await client.query({
          name: 'sbx_unit_begin_2',
          text: `SELECT a.clock_offset_ms, a.webhook_settings, a.settings,
                        ($3::bigint IS NULL OR pg_try_advisory_xact_lock($3::bigint)) AS free,
                        (SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT unnest($2::bigint[]) AS k ORDER BY 1) s) AS locked
                 FROM sandbox_accounts a WHERE a.account = $1`,
          values: [this.account, ids, busy === undefined ? null : lockId(this.account, busy.lock)],
        });
        const row = rows[0] as Parameters<typeof accountOf>[0] & { free: boolean };
        const account = this.remember(accountOf(row));
        if (busy !== undefined && !row.free) {
          // Held by a replay of an answer already committed: wait for it and replay too.
          const done = await client.query('SELECT 1 FROM sandbox_idempotency_keys WHERE account = $1 AND key = $2 AND state = $3', [this.account, busy.key, 'done']);
          if (done.rowCount === 0) {
            await client.query('ROLLBACK');
            return busy.answer();
          }
          await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockId(this.account, busy.lock)]);
        }
        const result = await work(this.unitOn(client, account));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        // Two requests locking the same rows in another order: PostgreSQL aborted one; it runs again.
        if ((err as { code?: string }).code === '40P01' && attempt < 3) continue;
        throw err;
      } finally {
        client.release(broken);
      }
    }
  }

  private unitOn(client: pg.PoolClient, account: AccountRow): Unit {
    const nowMs = this.clock.nowMs();
    return {
      account,
      nowMs,
      load: async (claim, spec, heldToken) => {
        const token = heldToken ?? randomBytes(9).toString('base64url');
        const { rows } = await client.query<{ claim: ClaimJson | null; objects: ObjectJson[]; fences: string[] }>({
          name: 'sbx_claim_load',
          text: CLAIM_AND_LOAD,
          values: [...this.claimValues(claim, token, HELD_KEY_GRACE_MS), spec.ids ?? [], spec.references ?? [], spec.aliases ?? [], spec.fences ?? []],
        });
        const row = rows[0]!;
        return { verdict: verdictOf(row.claim, claim?.fingerprint ?? null), objects: row.objects.map(objectOf), fences: row.fences };
      },
      save: async (changes) => {
        const key = changes.key;
        const empty = (changes.objects?.length ?? 0) + (changes.aliases?.length ?? 0) + (changes.fences?.length ?? 0) + (changes.bookings?.length ?? 0) + (changes.events?.length ?? 0) === 0;
        if (empty && key === undefined) return;
        // Events are kept whether or not they are delivered (the provider lists them: Stripe's
        // GET /v1/events); with webhooks off they are written as done, never sent.
        const events = changes.events ?? [];
        const undelivered = account.webhookSettings.enabled === false;
        await client.query({
          name: 'sbx_save',
          text: SAVE,
          values: [
            this.account,
            JSON.stringify((changes.objects ?? []).map((o) => ({ id: o.id, created_ms: o.createdMs, reference: o.reference, doc: o.doc }))),
            JSON.stringify((changes.aliases ?? []).map((a) => ({ alias: a.alias, object_id: a.objectId }))),
            JSON.stringify(changes.fences ?? []),
            JSON.stringify((changes.bookings ?? []).map((b) => ({ booked_ms: b.bookedMs, doc: b.doc }))),
            eventDelayMs(account.webhookSettings) + (changes.eventDelayMs ?? 0),
            JSON.stringify(events.map((e) => ({ event_id: e.eventId, type: e.type, body: e.body ?? null, items: e.items ?? null }))),
            key?.key ?? null,
            key !== undefined && 'store' in key ? JSON.stringify(key.store) : null,
            key === undefined ? 'none' : 'store' in key ? 'store' : 'release',
            undelivered,
            nowMs,
          ],
        });
      },
    };
  }

  /** Every object of the account (ledgers, lists), oldest first. */
  async allObjects(): Promise<StoredObject[]> {
    return (await this.read({ all: true })).objects;
  }
}

/** Events are due after the configured delay; with `reorder`, after a window in which they are collected and reversed. */
export function eventDelayMs(settings: Partial<WebhookSettings>): number {
  const delay = settings.delayMs ?? 0;
  return settings.reorder === true ? Math.max(REORDER_WINDOW_MS, delay) : delay;
}

/** Events emitted within this window are delivered in reverse when `reorder` is on. */
export const REORDER_WINDOW_MS = 50;
