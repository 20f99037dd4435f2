// One delivery attempt, taken by the dispatcher (delivery-dispatcher.ts) with its outbox row
// claimed and a slot of its endpoint leased: sign the exact body, POST it with the endpoint's
// timeout, then record the attempt and either finish the delivery or schedule the next attempt —
// in one transaction with the outbox row marked done and the lease released. No payment is locked
// and no other endpoint waits: a delivery is only taken when its endpoint has a free slot
// fleet-wide. A crash after the POST and before the commit sends the event again (at least once;
// merchants dedupe by event id).

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { AddressPolicy } from './address-policy.ts';
import { sql } from 'drizzle-orm';
import { markOutboxDone } from '../../jobs/outbox-claims.ts';
import type { DbOrTx } from '../../store/db.ts';
import { eventDeliveryAttempts } from '../../store/schema.ts';
import { enqueueWebhookJob } from '../webhook-jobs.ts';
import type { DeliveryJob } from '../webhook-jobs.ts';
import type { WebhookServices } from '../webhook-services.ts';
import { nextDeliveryAttempt } from './delivery-schedule.ts';
import { ENDPOINT_SIGNATURE_HEADER, SIGNATURE_HEADER, signDetached } from './delivery-signature.ts';
import { releaseLease } from './delivery-take.ts';
import { signingVersionAt } from './endpoint-keys.ts';
import type { TakenDelivery } from './delivery-take.ts';

export type DeliveryResult =
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'succeeded' | 'retry' | 'dead'; readonly statusCode: number | null };

interface DeliveryRow extends Record<string, unknown> {
  readonly id: string;
  readonly status: string;
  readonly attempts: number;
  /** Raw driver value (drizzle's execute leaves timestamps as text). */
  readonly created_at: string | Date;
  readonly event_id: string;
  readonly payment_id: string | null;
  readonly payload: unknown;
  readonly endpoint_id: string;
  readonly merchant_id: string;
  readonly url: string;
  readonly endpoint_status: string;
  readonly signing_version: number;
  /** Raw driver value, like created_at. */
  readonly signing_rotated_at: string | Date | null;
  readonly global_signature: boolean;
}

async function loadDelivery(db: DbOrTx, id: string): Promise<DeliveryRow | undefined> {
  const r = await db.execute<DeliveryRow>(sql`
    SELECT d.id, d.status, d.attempts, d.created_at, d.event_id, e.payment_id, e.payload, d.endpoint_id, d.merchant_id, w.url, w.status AS endpoint_status,
           w.signing_version, w.signing_rotated_at, w.global_signature
      FROM event_deliveries d JOIN merchant_events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE d.id = ${id}`);
  return r.rows[0];
}

/** Runs one taken delivery; throws on an infrastructure failure (the dispatcher gives the row back). */
export async function deliverTaken(s: WebhookServices, taken: TakenDelivery): Promise<DeliveryResult> {
  return attempt(s, taken, taken.payload as DeliveryJob);
}

async function finish(s: WebhookServices, taken: TakenDelivery, note: string, write?: (tx: DbOrTx) => Promise<void>): Promise<void> {
  await s.db.transaction(async (tx) => {
    await write?.(tx);
    await markOutboxDone(tx, taken.outboxId, s.now(), note);
    await releaseLease(tx, taken.outboxId, taken.token);
  });
}

async function attempt(s: WebhookServices, taken: TakenDelivery, job: DeliveryJob): Promise<DeliveryResult> {
  const d = await loadDelivery(s.db, job.deliveryId);
  if (d === undefined || d.status !== 'pending' || d.attempts !== job.seq) {
    const reason = d === undefined ? 'delivery missing' : `delivery ${d.status} after ${d.attempts} attempts (job for ${job.seq})`;
    await finish(s, taken, `skipped: ${reason}`);
    return { kind: 'skipped', reason };
  }
  if (d.endpoint_status !== 'enabled') {
    await finish(s, taken, 'skipped: endpoint deleted', (tx) => tx.execute(sql`
      UPDATE event_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = 'endpoint deleted' WHERE id = ${d.id} AND attempts = ${job.seq}`).then(() => undefined));
    return { kind: 'skipped', reason: 'endpoint deleted' };
  }
  const body = deliveredBody(d);
  const signatures = await signaturesFor(s, d, body);
  const post = await postToEndpoint(d.url, body, { ...signatures.headers, 'Switchyard-Event-Id': d.event_id, 'Switchyard-Delivery-Id': d.id }, s.settings.deliveryTimeoutMs, s.settings.addressPolicy);
  // The merchant's record says which host was refused; where it resolved is for our logs only.
  if (post.refusedAddress !== undefined) s.log(`webhooks: delivery ${d.id} to endpoint ${d.endpoint_id} refused: its host resolved to the internal address ${post.refusedAddress}`);
  return record(s, taken, d, job, signatures.kid, post);
}

/**
 * The bytes sent: the stored event with the merchant and the endpoint it is for, so a body names
 * its recipient (a merchant can check both), ahead of `data`.
 */
function deliveredBody(d: DeliveryRow): Buffer {
  const { data, ...head } = d.payload as { data?: unknown };
  return Buffer.from(JSON.stringify({ ...head, merchant_id: d.merchant_id, endpoint_id: d.endpoint_id, data }), 'utf8');
}

/**
 * The endpoint's own key signs `Switchyard-Signature`, so only this endpoint's JWKS verifies it.
 * An endpoint from before per-endpoint keys keeps the global key there (its merchant's verifier
 * still works) and gets the endpoint's signature beside it, until its first rotation.
 */
async function signaturesFor(s: WebhookServices, d: DeliveryRow, body: Buffer): Promise<{ kid: string; headers: Record<string, string> }> {
  const iat = Math.floor(s.now().getTime() / 1000);
  // A rotated key signs only once it has been announced long enough (endpoint-store.ts).
  const version = signingVersionAt(d.signing_version, d.signing_rotated_at === null ? null : new Date(d.signing_rotated_at), s.now());
  const own = await s.endpointKeys.key(d.endpoint_id, version);
  const ownSignature = await signDetached(body, own, iat);
  if (!d.global_signature) return { kid: own.kid, headers: { [SIGNATURE_HEADER]: ownSignature } };
  const global = s.keys.active;
  return { kid: global.kid, headers: { [SIGNATURE_HEADER]: await signDetached(body, global, iat), [ENDPOINT_SIGNATURE_HEADER]: ownSignature } };
}

async function record(s: WebhookServices, taken: TakenDelivery, d: DeliveryRow, job: DeliveryJob, kid: string, post: { statusCode: number | null; error: string | null; durationMs: number }): Promise<DeliveryResult> {
  const now = s.now();
  const n = job.seq + 1;
  const ok = post.statusCode !== null && post.statusCode >= 200 && post.statusCode < 300;
  const next = ok ? null : nextDeliveryAttempt(new Date(d.created_at), n, now, s.settings.deliverySchedule, s.settings.random);
  const status = ok ? 'succeeded' : next === null ? 'dead' : 'pending';
  await s.db.transaction(async (tx) => {
    // Conditional on the attempt count: a concurrent run of the same attempt records nothing twice.
    const moved = await tx.execute(sql`
      UPDATE event_deliveries SET attempts = ${n}, status = ${status}, next_attempt_at = ${next}, last_status_code = ${post.statusCode},
             last_error = ${post.error}, delivered_at = ${ok ? now : null}
       WHERE id = ${d.id} AND attempts = ${job.seq} AND status = 'pending' RETURNING id`);
    if (moved.rows.length === 1) {
      await tx.insert(eventDeliveryAttempts).values({ deliveryId: d.id, attempt: n, kid, statusCode: post.statusCode, error: post.error, durationMs: post.durationMs, at: now });
      if (next !== null) await enqueueWebhookJob(tx, 'event_delivery', { deliveryId: d.id, seq: n }, next, d.payment_id);
    }
    await markOutboxDone(tx, taken.outboxId, now);
    await releaseLease(tx, taken.outboxId, taken.token);
  });
  if (next !== null) s.kick();
  return { kind: ok ? 'succeeded' : next === null ? 'dead' : 'retry', statusCode: post.statusCode };
}

export interface PostResult {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  /** The internal address the policy refused to dial (never in `error`, which the merchant reads). */
  readonly refusedAddress?: string;
}

export async function postToEndpoint(url: string, body: Buffer, headers: Record<string, string>, timeoutMs: number, policy: AddressPolicy): Promise<PostResult> {
  const started = Date.now();
  const done = (statusCode: number | null, error: string | null, refusedAddress?: string | null): PostResult => ({
    statusCode, error: error?.slice(0, 300) ?? null, durationMs: Date.now() - started, ...(refusedAddress == null ? {} : { refusedAddress }),
  });
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  // An address literal is dialled without a lookup, so it is checked here; names are checked in the lookup, on the address dialled.
  const literal = isIP(host) !== 0 ? policy.refusal(host, host) : null;
  if (literal !== null) return done(null, `refused: ${literal.reason}`, literal.address);
  return new Promise((resolve) => {
    // node:http, not fetch: its lookup hook sees the address actually dialled. Redirects are never followed.
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
      method: 'POST', lookup: policy.lookupFor(host), timeout: timeoutMs,
      headers: { 'content-type': 'application/json', 'user-agent': 'Switchyard-Webhooks/1', 'content-length': String(body.length), ...headers },
    }, (res) => {
      // Drain so the socket is released; the body itself is not kept.
      res.resume();
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        resolve(done(status, status >= 200 && status < 300 ? null : `HTTP ${status}`));
      });
      res.on('error', (e) => resolve(done(status(res.statusCode), `${e.name}: ${e.message}`)));
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })));
    req.on('error', (e) => {
      const refused = (e as NodeJS.ErrnoException).code === 'EWEBHOOKADDRESS';
      resolve(done(null, e.name === 'TimeoutError' || refused ? e.message : `${e.name}: ${e.message}`, refused ? (e as { address?: string }).address : null));
    });
    req.end(body);
  });
}

const status = (n: number | undefined): number | null => n ?? null;
