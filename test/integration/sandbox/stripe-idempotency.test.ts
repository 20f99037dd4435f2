// Stripe's idempotency semantics in the sandbox: replay, mismatch, in-flight conflict, expiry.

import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rejectionOf, SECRET_KEY, startSandbox, stripeFor } from './helpers.ts';

let sandbox: StripeSandbox;
let stripe: Stripe;

beforeAll(async () => {
  sandbox = await startSandbox();
  stripe = stripeFor(sandbox);
});
afterAll(() => sandbox.close());

const paymentsWithReference = async (reference: string) => (await sandbox.ledger()).filter((entry) => entry.reference === reference);

const params = (reference: string, payment_method = 'pm_card_visa'): Stripe.PaymentIntentCreateParams => ({
  amount: 1500,
  currency: 'usd',
  capture_method: 'manual',
  confirm: true,
  payment_method,
  metadata: { attempt_id: reference },
});

async function postRaw(path: string, body: string, idempotencyKey: string): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET_KEY}`, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': idempotencyKey },
    body,
  });
  return { status: response.status, body: await response.text(), headers: response.headers };
}

describe('idempotency', () => {
  it('replays the same object for the same key and parameters, creating nothing new', async () => {
    const first = await stripe.paymentIntents.create(params('att_replay'), { idempotencyKey: 'key-replay' });
    const second = await stripe.paymentIntents.create(params('att_replay'), { idempotencyKey: 'key-replay' });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.idempotencyKey).toBe('key-replay');
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(second.lastResponse.headers['original-request']).toBe(first.lastResponse.requestId);
    expect((await paymentsWithReference('att_replay'))).toHaveLength(1);
  });

  it('replays a stored 402 decline byte for byte', async () => {
    const body = 'amount=900&currency=usd&confirm=true&payment_method=pm_card_visa_chargeDeclined&metadata[attempt_id]=att_402';
    const first = await postRaw('/v1/payment_intents', body, 'key-402');
    const second = await postRaw('/v1/payment_intents', body, 'key-402');
    expect(first.status).toBe(402);
    expect(second.status).toBe(402);
    expect(second.body).toBe(first.body);
    expect(second.headers.get('idempotency-key')).toBe('key-402');
    expect((await paymentsWithReference('att_402'))).toHaveLength(1);
  });

  it('replays a stored 500 without performing the operation again', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'error_500_after_processing', count: 1 });
    const first = await rejectionOf(stripe.paymentIntents.create(params('att_500'), { idempotencyKey: 'key-500' }));
    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(first).toMatchObject({ statusCode: 500 });
    const replay = await rejectionOf(stripe.paymentIntents.create(params('att_500'), { idempotencyKey: 'key-500' }));
    expect(replay).toMatchObject({ statusCode: 500, message: (first as Error).message });
    // The operation ran once, before the 500: the ledger has exactly that authorization.
    expect((await paymentsWithReference('att_500'))).toMatchObject([{ authorized: 1500 }]);
  });

  it('refuses the same key with other parameters', async () => {
    await stripe.paymentIntents.create(params('att_mismatch'), { idempotencyKey: 'key-mismatch' });
    const err = await rejectionOf(stripe.paymentIntents.create({ ...params('att_mismatch'), amount: 1600 }, { idempotencyKey: 'key-mismatch' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(err).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
    const otherEndpoint = await rejectionOf(stripe.refunds.create({ payment_intent: 'pi_x' }, { idempotencyKey: 'key-mismatch' }));
    expect(otherEndpoint).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((await paymentsWithReference('att_mismatch'))).toHaveLength(1);
  });

  it('answers 409 to the same key while the first request is still executing', async () => {
    await sandbox.scheduleFault({ op: 'authorize', mode: 'latency', count: 1, latencyMs: 400, process: 'after' });
    const first = stripe.paymentIntents.create(params('att_409'), { idempotencyKey: 'key-409' });
    await sleep(100);
    const err = await rejectionOf(stripe.paymentIntents.create(params('att_409'), { idempotencyKey: 'key-409' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(err).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
    const created = await first;
    const replay = await stripe.paymentIntents.create(params('att_409'), { idempotencyKey: 'key-409' });
    expect(replay.id).toBe(created.id);
    expect((await paymentsWithReference('att_409'))).toHaveLength(1);
  });

  it('answers 409 to a same-key request sent a few ms after the first, with no fault: it does not wait and replay', async () => {
    // Live Stripe refuses a key held by a request that has not committed; the sandbox used to wait
    // for the first and replay it, so a gateway never saw this 409 before production.
    const answerOf = (call: Promise<Stripe.Response<Stripe.PaymentIntent>>): Promise<string> =>
      call.then(
        (pi) => (pi.lastResponse.headers['idempotent-replayed'] === 'true' ? 'replayed' : 'executed'),
        (err: unknown) => {
          expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
          expect(err).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
          return '409';
        },
      );
    const pairs: string[][] = [];
    for (let i = 0; i < 5; i++) {
      const send = () => answerOf(stripe.paymentIntents.create(params(`att_overlap_${i}`), { idempotencyKey: `key-overlap-${i}` }));
      const first = send();
      await sleep(2);
      const second = send();
      const pair = [await first, await second];
      pairs.push(pair.sort());
      // One of the two ran, once; a later resend replays it.
      expect(pair).toContain('executed');
      expect(await paymentsWithReference(`att_overlap_${i}`)).toHaveLength(1);
      expect(await send()).toBe('replayed');
    }
    expect(pairs.map((p) => p.join('+')), JSON.stringify(pairs)).toContain('409+executed');
  });

  it('stores nothing when the parameters fail validation', async () => {
    const invalid = await rejectionOf(stripe.paymentIntents.create({ currency: 'usd' } as Stripe.PaymentIntentCreateParams, { idempotencyKey: 'key-invalid' }));
    expect(invalid).toMatchObject({ code: 'parameter_missing' });
    const valid = await stripe.paymentIntents.create(params('att_invalid'), { idempotencyKey: 'key-invalid' });
    expect(valid.status).toBe('requires_capture');
  });

  it('refuses keys longer than 255 characters', async () => {
    expect((await stripe.paymentIntents.create({ amount: 100, currency: 'usd' }, { idempotencyKey: 'k'.repeat(255) })).object).toBe('payment_intent');
    const err = await rejectionOf(stripe.paymentIntents.create({ amount: 100, currency: 'usd' }, { idempotencyKey: 'k'.repeat(256) }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(err).toMatchObject({ statusCode: 400, param: 'Idempotency-Key' });
  });

  it('forgets keys after keyTtlMs on the sandbox clock', async () => {
    const own = await startSandbox({ keyTtlMs: 24 * 3600 * 1000 });
    const client = stripeFor(own);
    const first = await client.paymentIntents.create(params('att_ttl'), { idempotencyKey: 'key-ttl' });
    await own.advanceClock(23 * 3600);
    expect((await client.paymentIntents.create(params('att_ttl'), { idempotencyKey: 'key-ttl' })).id).toBe(first.id);
    await own.advanceClock(3600);
    const after = await client.paymentIntents.create(params('att_ttl'), { idempotencyKey: 'key-ttl' });
    expect(after.id).not.toBe(first.id);
    expect((await own.ledger()).filter((entry) => entry.reference === 'att_ttl')).toHaveLength(2);
    await own.close();
  });

  it('keeps keys for the lifetime the control API gives the account, then forgets them (chaos key_expiry)', async () => {
    const own = await startSandbox();
    const client = stripeFor(own);
    await own.setKeyLifetime(60_000);
    const first = await client.paymentIntents.create(params('att_short'), { idempotencyKey: 'key-short' });
    await own.advanceClock(59);
    expect((await client.paymentIntents.create(params('att_short'), { idempotencyKey: 'key-short' })).id).toBe(first.id);
    await own.advanceClock(2);
    const after = await client.paymentIntents.create(params('att_short'), { idempotencyKey: 'key-short' });
    expect(after.id).not.toBe(first.id);
    // Back to Stripe's 24 hours: the new key is kept again past a minute.
    await own.setKeyLifetime(null);
    await own.advanceClock(120);
    expect((await client.paymentIntents.create(params('att_short'), { idempotencyKey: 'key-short' })).id).toBe(after.id);
    await own.close();
  });
});
