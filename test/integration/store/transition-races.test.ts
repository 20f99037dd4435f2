// Concurrency and crash safety of transition(): many writers on one payment, duplicate provider
// answers, a forced version conflict, and a connection killed right before COMMIT.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids.ts';
import type { Payment } from '../../../src/core/payment.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { loadPayment, loadTimeline } from '../../../src/store/payment-queries.ts';
import { createPayment, transition } from '../../../src/store/transition.ts';
import type { TransitionResult } from '../../../src/store/transition.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { authorizeAnswer, env, paymentRequest, succeeded } from './env.ts';

describe('transition() under concurrency and crashes', () => {
  let t: TestDatabase;
  let merchantId: string;

  beforeAll(async () => {
    t = await createTestDatabase('store_races', { poolMax: 20 });
    merchantId = (await createMerchant(t.db, { name: 'Shop' })).merchant.id;
  });
  afterAll(async () => {
    await t.drop();
  });

  async function authorizedPayment(amount: number): Promise<Payment> {
    const created = await createPayment(t.db, paymentRequest(merchantId, { amount }), env);
    const r = await transition(t.db, created.payment.id, authorizeAnswer(created.payment.attempts[0]!.id, succeeded(amount)), 'worker', env);
    expect(r.payment.state).toBe('authorized');
    return r.payment;
  }

  async function counts(paymentId: string): Promise<{ transitions: number; applied: number; outbox: number; captures: number; refunds: number }> {
    const r = await t.pool.query<{ transitions: number; applied: number; outbox: number; captures: number; refunds: number }>(
      `SELECT (SELECT count(*)::int FROM payment_transitions WHERE payment_id = $1) AS transitions,
              (SELECT count(*)::int FROM payment_transitions WHERE payment_id = $1 AND outcome = 'applied') AS applied,
              (SELECT count(*)::int FROM outbox WHERE payment_id = $1) AS outbox,
              (SELECT count(*)::int FROM captures WHERE payment_id = $1) AS captures,
              (SELECT count(*)::int FROM refunds WHERE payment_id = $1) AS refunds`,
      [paymentId],
    );
    return r.rows[0]!;
  }

  it('50 concurrent captures never capture more than authorized and lose no update', async () => {
    const p = await authorizedPayment(10_000);
    const accepted: number[] = [];
    // Captures go one at a time (the payment is `capturing` until confirmed), so race in rounds.
    for (let round = 0; round < 5; round++) {
      const amounts = Array.from({ length: 50 }, (_, i) => 500 + ((i * 37 + round * 11) % 900));
      const results = await Promise.all(
        amounts.map((amount) => transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount, final: false }, 'api', env)),
      );
      const applied = results.filter((r): r is Extract<TransitionResult, { kind: 'applied' }> => r.kind === 'applied');
      expect(applied.length).toBeLessThanOrEqual(1);
      expect(results.every((r) => r.kind === 'applied' || r.kind === 'illegal')).toBe(true);
      for (const r of applied) {
        const c = r.payment.captures.at(-1)!;
        accepted.push(c.amount);
        await transition(t.db, p.id, { type: 'call_result', ref: { op: 'capture', captureId: c.id }, outcome: succeeded(c.amount) }, 'worker', env);
      }
    }
    const final = (await loadPayment(t.db, merchantId, p.id))!;
    const sum = accepted.reduce((a, b) => a + b, 0);
    expect(accepted.length).toBeGreaterThan(3);
    expect(final.amountCaptured).toBe(sum);
    expect(final.amountCaptured).toBeLessThanOrEqual(final.amountAuthorized);
    expect(final.captures.map((c) => c.amount)).toEqual(accepted);
    expect((await counts(p.id)).captures).toBe(accepted.length);
  });

  it('50 concurrent refunds never refund more than captured and lose no update', async () => {
    const p = await authorizedPayment(1_000);
    const cap = await transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount: 1_000, final: true }, 'api', env);
    const captureId = cap.payment.captures[0]!.id;
    await transition(t.db, p.id, { type: 'call_result', ref: { op: 'capture', captureId }, outcome: succeeded(1_000) }, 'worker', env);

    const requests = Array.from({ length: 50 }, () => transition(t.db, p.id, { type: 'refund_requested', refundId: newId('refund'), amount: 30, reason: null }, 'api', env));
    const results = await Promise.all(requests);
    const applied = results.filter((r) => r.kind === 'applied');
    // 33 x 30 = 990 fits in 1000; a lost update would let more through.
    expect(applied).toHaveLength(33);
    expect(results.filter((r) => r.kind === 'illegal' && r.code === 'amount_exceeds_captured')).toHaveLength(17);

    const refunds = (await loadPayment(t.db, merchantId, p.id))!.refunds;
    expect(refunds).toHaveLength(33);
    const confirmations = await Promise.all(
      refunds.map((r) => transition(t.db, p.id, { type: 'call_result', ref: { op: 'refund', refundId: r.id }, outcome: succeeded(30) }, 'worker', env)),
    );
    expect(confirmations.every((r) => r.kind === 'applied')).toBe(true);
    const final = (await loadPayment(t.db, merchantId, p.id))!;
    expect(final.amountRefunded).toBe(990);
    expect(final.refunds.every((r) => r.status === 'succeeded')).toBe(true);
    // Every applied transition bumped the version exactly once.
    const c = await counts(p.id);
    expect(final.version).toBe(c.applied);
  });

  it('two workers applying the same provider answer produce exactly one applied transition', async () => {
    const created = await createPayment(t.db, paymentRequest(merchantId), env);
    const answer = authorizeAnswer(created.payment.attempts[0]!.id, succeeded(1000, 'psp_same'));
    const before = await counts(created.payment.id);
    const results = await Promise.all([
      transition(t.db, created.payment.id, answer, 'worker', env),
      transition(t.db, created.payment.id, answer, 'webhook', env),
      transition(t.db, created.payment.id, answer, 'poll', env),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['applied', 'noop', 'noop']);
    const applied = results.find((r) => r.kind === 'applied')!;
    const after = await counts(created.payment.id);
    expect(after.applied - before.applied).toBe(1);
    expect(after.outbox - before.outbox).toBe(applied.outboxIds.length);
    expect((await loadPayment(t.db, merchantId, created.payment.id))!.version).toBe(created.payment.version + 1);
  });

  it('retries after a version conflict and applies the input to the newer version', async () => {
    const p = await authorizedPayment(1_000);
    const cap = await transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount: 1_000, final: true }, 'api', env);
    await transition(t.db, p.id, { type: 'call_result', ref: { op: 'capture', captureId: cap.payment.captures[0]!.id }, outcome: succeeded(1_000) }, 'worker', env);

    const tries: number[] = [];
    const first = newId('refund');
    const result = await transition(t.db, p.id, { type: 'refund_requested', refundId: first, amount: 700, reason: null }, 'api', env, {
      hooks: {
        afterLoad: async ({ tryNo }) => {
          tries.push(tryNo);
          // Another writer commits between our load and our update.
          if (tryNo === 1) await transition(t.db, p.id, { type: 'refund_requested', refundId: newId('refund'), amount: 200, reason: null }, 'api', env);
        },
      },
    });
    expect(tries).toEqual([1, 2]);
    expect(result.kind).toBe('applied');
    expect(result.payment.refunds.map((r) => r.amount)).toEqual([200, 700]);
    // The retry saw the other refund: a third one of 200 no longer fits.
    const third = await transition(t.db, p.id, { type: 'refund_requested', refundId: newId('refund'), amount: 200, reason: null }, 'api', env);
    expect(third).toMatchObject({ kind: 'illegal', code: 'amount_exceeds_captured' });
  });

  it('leaves nothing behind when the connection dies right before COMMIT', async () => {
    const p = await authorizedPayment(1_000);
    const before = await counts(p.id);
    const attempt = transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount: 500, final: false }, 'api', env, {
      hooks: {
        beforeCommit: async ({ backendPid }) => {
          await t.pool.query('SELECT pg_terminate_backend($1)', [backendPid]);
          // Wait until the server has really dropped it, then let transition() try to COMMIT.
          for (let i = 0; i < 100; i++) {
            const r = await t.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backendPid]);
            if (r.rowCount === 0) return;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        },
      },
    });
    await expect(attempt).rejects.toThrow();
    expect(await loadPayment(t.db, merchantId, p.id)).toEqual(p);
    expect(await counts(p.id)).toEqual(before);
    expect((await loadTimeline(t.db, merchantId, p.id))!.at(-1)!.to).toBe('authorized');

    // The pool recovers: the same capture goes through on a fresh connection.
    const again = await transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount: 500, final: false }, 'api', env);
    expect(again).toMatchObject({ kind: 'applied', to: 'capturing' });
  });
});
