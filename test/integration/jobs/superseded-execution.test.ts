// Two executions of one outbox row at once (a stalled BullMQ job and its twin, both with the same
// job id): execution A claims with a short lease and calls; its lease expires; B claims and the
// provider approves B; then A's refusal arrives. The refusal is no proof — B may be (and is)
// charging with the same key — so there is no failover, one live authorization and nothing to
// release. Real PostgreSQL, Redis and Stripe sandbox; the gateway runs in role `api`, so only the
// executions this test starts touch the outbox.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallOutcome } from '../../../src/core/outcome.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { processOutboxRow } from '../../../src/jobs/outbox-processor.ts';
import type { ProcessorDeps } from '../../../src/jobs/outbox-processor.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;
let a: SandboxControl;
let b: SandboxControl;

beforeAll(async () => {
  gw = await startTestGateway('jobs_superseded', twoStripeConfig(), { role: 'api', dispatchAtCommit: false });
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  b = gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
});
afterAll(async () => gw?.close());

function deps(over: Partial<ProcessorDeps> = {}): ProcessorDeps {
  return { db: gw.rt.database.db, connectors: gw.rt.connectors, breakers: gw.rt.breakers, envs: gw.rt.envs, kick: () => undefined, ...over };
}

function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

async function pendingCalls(paymentId: string, op?: string): Promise<number[]> {
  const r = await gw.rt.database.db.execute<{ id: string }>(sql`
    SELECT id FROM outbox WHERE payment_id = ${paymentId} AND kind = 'provider_call' AND status = 'pending'
       AND (${op ?? null}::text IS NULL OR payload->>'op' = ${op ?? null}) ORDER BY id`);
  return r.rows.map((x) => Number(x.id));
}

/** A new payment whose authorize call is written (Stripe's PaymentIntent create, which moves no money, runs first). */
async function payToAuthorize(): Promise<number> {
  const created = await gw.pay();
  for (let i = 0; i < 5; i++) {
    const [auth] = await pendingCalls(created.id, 'authorize');
    if (auth !== undefined) return auth;
    for (const id of await pendingCalls(created.id)) await processOutboxRow(deps(), id, `ob_${id}`);
  }
  throw new Error('no authorize call written');
}

async function paymentOf(rowId: number): Promise<string> {
  const r = await gw.rt.database.db.execute<{ payment_id: string }>(sql`SELECT payment_id FROM outbox WHERE id = ${rowId}`);
  return r.rows[0]!.payment_id;
}

/** Runs whatever the core wrote after the race (a resend, a query — or, were the refusal proof, a failover and a release). */
async function drain(paymentId: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const ids = await pendingCalls(paymentId);
    if (ids.length === 0) return;
    for (const id of ids) await processOutboxRow(deps(), id, `ob_${id}`);
  }
  throw new Error('outbox did not drain');
}

async function load(id: string): Promise<Payment> {
  return gw.waitFor(id, () => true, 1);
}

const REFUSED: CallOutcome = { kind: 'not_sent', reason: 'connection_refused', detail: 'execution A: connect refused' };

/** A refuses at once but its answer waits for `aAnswers`; B calls the provider for real, its answer waits for `bApplies`. */
async function race(): Promise<{ payment: Payment; aAnswer: unknown }> {
  const rowId = await payToAuthorize();
  const created = { id: await paymentOf(rowId) };
  const aCalling = gate();
  const aAnswers = gate();
  const execA = processOutboxRow(deps({
    leaseMs: 200,
    renewLease: false, // A's process stalls: it cannot renew its lease
    aroundCall: async () => {
      aCalling.open();
      await aAnswers.promise;
      return REFUSED;
    },
  }), rowId, `ob_${rowId}`);
  await aCalling.promise;
  await new Promise((r) => setTimeout(r, 400)); // A's lease expires while it is still running
  const bAnswered = gate<CallOutcome>();
  const bApplies = gate();
  const execB = processOutboxRow(deps({
    aroundCall: async (_e, call) => {
      const o = await call();
      bAnswered.open(o);
      await bApplies.promise;
      return o;
    },
  }), rowId, `ob_${rowId}`); // the twin: the same job id
  expect((await bAnswered.promise).kind).toBe('succeeded'); // the provider approved B
  aAnswers.open(); // A's refusal is applied while B's approval is still on its way
  await execA;
  bApplies.open();
  await execB;
  await drain(created.id);
  const r = await gw.rt.database.db.execute<{ raw: unknown }>(sql`
    SELECT raw_provider AS raw FROM payment_transitions WHERE payment_id = ${created.id} AND raw_provider->>'kind' IN ('not_sent', 'unknown') ORDER BY id LIMIT 1`);
  return { payment: await load(created.id), aAnswer: r.rows[0]?.raw };
}

async function expectOneLiveAuthorization(p: Payment): Promise<void> {
  expect(p.state).toBe('authorized');
  expect(p.attempts.map((x) => [x.connector, x.status])).toEqual([['stripe_a', 'authorized']]);
  const live = (await a.ledger()).filter((e) => e.reference === p.attempts[0]!.id && e.authorized > 0 && !e.cancelled);
  expect(live).toHaveLength(1);
  expect((await b.ledger()).filter((e) => e.reference.startsWith(p.id) || p.attempts.some((x) => x.id === e.reference))).toHaveLength(0);
}

describe('a refusal from an execution that lost its claim', () => {
  it('arriving before the approval of the execution that took the row over: unknown, no failover, one live authorization, nothing to release', async () => {
    const { payment, aAnswer } = await race();
    expect(aAnswer).toMatchObject({ kind: 'unknown', reason: 'superseded_execution' });
    await expectOneLiveAuthorization(payment);
  });

  it('a twin with the same job id cannot take a live claim', async () => {
    const rowId = await payToAuthorize();
    const created = { id: await paymentOf(rowId) };
    const holding = gate();
    const release = gate();
    const first = processOutboxRow(deps({ aroundCall: async (_e, call) => { holding.open(); await release.promise; return call(); } }), rowId, `ob_${rowId}`);
    await holding.promise;
    const twin = await processOutboxRow(deps(), rowId, `ob_${rowId}`);
    expect(twin).toEqual({ kind: 'skipped', reason: 'claimed' });
    release.open();
    await first;
    await expectOneLiveAuthorization(await load(created.id));
  });
});
