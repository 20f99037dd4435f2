// createPayment, transition() and the read repositories against a real database.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { findAttemptByProviderRef, listPayments, loadPayment, loadTimeline } from '../../../src/store/payment-queries.ts';
import { loadAggregateByAttempt } from '../../../src/store/payment-load.ts';
import { createPayment, PaymentNotFoundError, transition } from '../../../src/store/transition.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { authorizeAnswer, env, paymentRequest, succeeded } from './env.ts';

describe('payment store', () => {
  let t: TestDatabase;
  let merchantId: string;
  let otherMerchantId: string;

  beforeAll(async () => {
    t = await createTestDatabase('store_payments');
    merchantId = (await createMerchant(t.db, { name: 'Shop' })).merchant.id;
    otherMerchantId = (await createMerchant(t.db, { name: 'Other shop' })).merchant.id;
  });
  afterAll(async () => {
    await t.drop();
  });

  async function authorized(over: Parameters<typeof paymentRequest>[1] = {}) {
    const created = await createPayment(t.db, paymentRequest(merchantId, over), env);
    const attempt = created.payment.attempts[0]!;
    const r = await transition(t.db, created.payment.id, authorizeAnswer(attempt.id, succeeded(created.payment.amount)), 'worker', env);
    expect(r.kind).toBe('applied');
    return r.payment;
  }

  it('creates a payment with its first attempt, transition and outbox rows in one go, and loads it back exactly', async () => {
    const kicked: number[][] = [];
    const created = await createPayment(t.db, paymentRequest(merchantId), env, { onCommitted: (ids) => void kicked.push([...ids]) });
    expect(created.payment.state).toBe('authorizing');
    expect(created.payment.version).toBe(1);
    expect(await loadPayment(t.db, merchantId, created.payment.id)).toEqual(created.payment);

    const outbox = await t.pool.query<{ id: string; kind: string; connector: string | null; provider_key: string | null; run_at: Date; transition_id: string }>(
      `SELECT id, kind, connector, provider_key, run_at, transition_id FROM outbox WHERE payment_id = $1 ORDER BY id`,
      [created.payment.id],
    );
    expect(outbox.rows.map((r) => r.kind).sort()).toEqual(created.effects.map((e) => e.type).sort());
    const call = outbox.rows.find((r) => r.kind === 'provider_call')!;
    expect(call.connector).toBe('direct_a');
    expect(call.provider_key).toBe(created.payment.attempts[0]!.authKey);
    const timer = outbox.rows.find((r) => r.kind === 'timer')!;
    expect(timer.run_at.toISOString()).toBe(created.payment.deadlineAt);
    expect(outbox.rows.every((r) => Number(r.transition_id) === created.transitionId)).toBe(true);
    expect(kicked).toEqual([outbox.rows.map((r) => Number(r.id))]);
    expect(created.outboxIds).toEqual(outbox.rows.map((r) => Number(r.id)));

    const timeline = await loadTimeline(t.db, merchantId, created.payment.id);
    expect(timeline).toMatchObject([{ from: 'created', to: 'authorizing', origin: 'api', outcome: 'applied', version: 1 }]);
  });

  it('creates a payment straight into failed when no connector can take it', async () => {
    const allOpen = { ...env, openBreakers: new Set(['direct_a', 'direct_b']) };
    const created = await createPayment(t.db, paymentRequest(merchantId), allOpen);
    expect(created.payment).toMatchObject({ state: 'failed', attempts: [] });
    expect(await loadPayment(t.db, merchantId, created.payment.id)).toEqual(created.payment);
    // The event is recorded in the creating transaction, and carries the payment as it was at that version.
    const events = await t.pool.query<{ type: string; payload: { type: string; data: { payment: { status: string; version: number } } } }>(
      `SELECT type, payload FROM merchant_events WHERE payment_id = $1`,
      [created.payment.id],
    );
    expect(events.rows).toMatchObject([{ type: 'payment.failed', payload: { type: 'payment.failed', data: { payment: { object: 'payment', status: 'failed', id: created.payment.id } } } }]);
    const queued = await t.pool.query(`SELECT 1 FROM outbox WHERE payment_id = $1 AND kind = 'merchant_event'`, [created.payment.id]);
    expect(queued.rowCount).toBe(0);
  });

  it('round-trips the aggregate through transitions: what transition() returns is what loadPayment() reads', async () => {
    const p = await authorized();
    expect(p.state).toBe('authorized');
    expect(await loadPayment(t.db, merchantId, p.id)).toEqual(p);

    const capture = await transition(t.db, p.id, { type: 'capture_requested', captureId: newId('capture'), amount: 400, final: false }, 'api', env);
    expect(capture.kind).toBe('applied');
    expect(await loadPayment(t.db, merchantId, p.id)).toEqual(capture.payment);
    const captureId = capture.payment.captures[0]!.id;
    const done = await transition(t.db, p.id, { type: 'call_result', ref: { op: 'capture', captureId }, outcome: succeeded(400) }, 'worker', env);
    expect(done).toMatchObject({ kind: 'applied', to: 'captured' });
    expect(done.payment).toMatchObject({ amountCaptured: 400, captureOpen: true, version: p.version + 2 });
    expect(await loadPayment(t.db, merchantId, p.id)).toEqual(done.payment);

    // The capture is posted to the ledger in the transition's own transaction, balanced.
    const ledger = await t.pool.query<{ kind: string; description: string; account: string; direction: string; amount: string }>(
      `SELECT t.kind, t.description, e.account, e.direction, e.amount FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id WHERE t.payment_id = $1 ORDER BY e.direction`, [p.id]);
    expect(ledger.rows.map((r) => [r.kind, r.description, r.direction, Number(r.amount)])).toEqual([
      ['capture', captureId, 'credit', 400],
      ['capture', captureId, 'debit', 400],
    ]);
  });

  it('round-trips customer authentication exactly: the payment settings and the attempt waiting for its customer', async () => {
    const authentication = { mode: 'automatic' as const, returnUrl: 'https://shop.example/done', gatewayUrl: 'https://pay.example' };
    const created = await createPayment(t.db, paymentRequest(merchantId, { authentication }), env);
    expect(await loadPayment(t.db, merchantId, created.payment.id)).toEqual(created.payment);
    const attempt = created.payment.attempts[0]!;
    const challenge = { kind: 'action_required' as const, action: 'redirect', providerRef: 'pi_3ds', redirect: { url: 'https://p.example/3ds', method: 'POST' as const, data: { MD: 'x' } } };
    const r = await transition(t.db, created.payment.id, authorizeAnswer(attempt.id, challenge), 'worker', env);
    expect(r).toMatchObject({ kind: 'applied', to: 'requires_action' });
    const loaded = await loadPayment(t.db, merchantId, created.payment.id);
    expect(loaded).toEqual(r.payment);
    expect(loaded!.attempts[0]!.authentication).toMatchObject({ stage: 'awaiting_customer', action: { method: 'POST', data: { MD: 'x' } } });
    const back = await transition(t.db, created.payment.id, { type: 'customer_returned', attemptId: attempt.id, returned: { redirectResult: 'rr' } }, 'api', env);
    expect(back).toMatchObject({ kind: 'applied', to: 'authorizing' });
    expect(await loadPayment(t.db, merchantId, created.payment.id)).toEqual(back.payment);
  });

  it('records an ignored input (illegal or no-op) with its reason, without bumping the version', async () => {
    const p = await authorized();
    const illegal = await transition(t.db, p.id, { type: 'refund_requested', refundId: newId('refund'), amount: 100, reason: null }, 'api', env);
    expect(illegal).toMatchObject({ kind: 'illegal', code: 'invalid_state', outboxIds: [] });
    const attempt = p.attempts[0]!;
    const duplicate = await transition(t.db, p.id, authorizeAnswer(attempt.id, succeeded(p.amount, attempt.providerRef!)), 'webhook', env, {
      rawProvider: { eventCode: 'AUTHORISATION', success: 'true' },
    });
    expect(duplicate.kind).toBe('noop');
    const now = await loadPayment(t.db, merchantId, p.id);
    expect(now).toEqual(p);

    const timeline = (await loadTimeline(t.db, merchantId, p.id))!;
    expect(timeline.slice(-2)).toMatchObject([
      { outcome: 'ignored', code: 'invalid_state', from: 'authorized', to: 'authorized', version: p.version, origin: 'api' },
      { outcome: 'ignored', code: 'noop', attemptId: attempt.id, origin: 'webhook', rawProvider: { eventCode: 'AUTHORISATION', success: 'true' } },
    ]);
  });

  it('stores discrepancies in their own table', async () => {
    const created = await createPayment(t.db, paymentRequest(merchantId), env);
    const attempt = created.payment.attempts[0]!;
    const decline = { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'stolen_card', providerCode: '5' } as const;
    expect((await transition(t.db, created.payment.id, authorizeAnswer(attempt.id, decline), 'worker', env)).kind).toBe('applied');
    // An approval after a definitive decline is live money: released, and recorded as a discrepancy.
    const r = await transition(t.db, created.payment.id, authorizeAnswer(attempt.id, succeeded(1000)), 'webhook', env);
    expect(r.kind).toBe('applied');
    const found = await t.pool.query(`SELECT kind, attempt_id FROM discrepancies WHERE payment_id = $1`, [created.payment.id]);
    const expected = r.effects.flatMap((e) => (e.type === 'discrepancy' ? [{ kind: e.kind, attempt_id: e.attemptId ?? null }] : []));
    expect(expected.length).toBeGreaterThan(0);
    expect(found.rows).toEqual(expected);
  });

  it('scopes reads and writes to the merchant', async () => {
    const p = await authorized();
    expect(await loadPayment(t.db, otherMerchantId, p.id)).toBeNull();
    expect(await loadTimeline(t.db, otherMerchantId, p.id)).toBeNull();
    await expect(
      transition(t.db, p.id, { type: 'void_requested' }, 'api', env, { merchantId: otherMerchantId }),
    ).rejects.toBeInstanceOf(PaymentNotFoundError);
    expect((await loadPayment(t.db, merchantId, p.id))!.state).toBe('authorized');
    const page = await listPayments(t.db, otherMerchantId, null, {}, { limit: 100 });
    expect(page.data).toEqual([]);
  });

  it('lists payments newest first, by reference and status, with a cursor', async () => {
    const ref = `list-${newId('event')}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await createPayment(t.db, paymentRequest(merchantId, { reference: ref }), env)).payment);
    await transition(t.db, made[1]!.id, authorizeAnswer(made[1]!.attempts[0]!.id, succeeded(1000)), 'worker', env);
    const newestFirst = made.map((p) => p.id).reverse();

    const first = await listPayments(t.db, merchantId, null, { reference: ref }, { limit: 2 });
    expect(first.data.map((p) => p.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.hasMore).toBe(true);
    const rest = await listPayments(t.db, merchantId, null, { reference: ref }, { limit: 10, cursor: { after: first.data[1]!.id } });
    expect(rest.data.map((p) => p.id)).toEqual(newestFirst.slice(2));
    expect(rest.hasMore).toBe(false);
    expect(rest.data[0]).toEqual(await loadPayment(t.db, merchantId, rest.data[0]!.id));

    const authorizedOnly = await listPayments(t.db, merchantId, null, { reference: ref, status: ['authorized'] }, { limit: 10 });
    expect(authorizedOnly.data.map((p) => p.id)).toEqual([made[1]!.id]);
  });

  it('finds attempts by provider reference and payments by attempt', async () => {
    const p = await authorized();
    const attempt = p.attempts[0]!;
    expect(attempt.providerRef).not.toBeNull();
    expect(await findAttemptByProviderRef(t.db, 'direct_a', attempt.providerRef!)).toEqual({ paymentId: p.id, attempt });
    expect(await findAttemptByProviderRef(t.db, 'direct_b', attempt.providerRef!)).toBeNull();
    expect(await loadAggregateByAttempt(t.db, attempt.id)).toEqual(p);
    expect(await loadAggregateByAttempt(t.db, 'att_missing')).toBeNull();
  });

  it('refuses to read an amount that is not a safe integer', async () => {
    const p = await authorized();
    await t.pool.query(`UPDATE payments SET amount = 9007199254740993 WHERE id = $1`, [p.id]);
    await expect(loadPayment(t.db, merchantId, p.id)).rejects.toThrow(/not a safe integer/);
  });
});
