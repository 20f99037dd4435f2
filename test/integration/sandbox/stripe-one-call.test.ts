// What the one-call authorization (issue 26) relies on in the Stripe sandbox, through the real SDK:
// create with confirm=true, error_on_requires_action for a card that needs authentication, the list
// read-after-write with `created` filters and metadata, and search lagging behind it.

import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector } from '../../../src/connectors/registry.ts';
import { LOOKUP_MAX_PAGES } from '../../../src/connectors/stripe/lookup.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rejectionOf, SECRET_KEY, startSandbox, stripeFor } from './helpers.ts';

let sandbox: StripeSandbox;
let stripe: Stripe;

beforeAll(async () => {
  sandbox = await startSandbox({ searchLagMs: 30_000 });
  stripe = stripeFor(sandbox);
});
afterAll(() => sandbox.close());

const create = (attempt: string, payment_method = 'pm_card_visa', extra: Partial<Stripe.PaymentIntentCreateParams> = {}): Promise<Stripe.Response<Stripe.PaymentIntent>> =>
  stripe.paymentIntents.create({ amount: 1200, currency: 'eur', capture_method: 'manual', confirm: true, payment_method, metadata: { attempt_id: attempt }, ...extra }, { idempotencyKey: `key-${attempt}` });

describe('one call', () => {
  it('create with confirm=true authorizes in the one request', async () => {
    const pi = await create('att_one');
    expect(pi.status).toBe('requires_capture');
    expect(pi.amount_capturable).toBe(1200);
    expect((await sandbox.ledger()).filter((e) => e.reference === 'att_one')).toMatchObject([{ authorized: 1200 }]);
  });

  it('error_on_requires_action: a card that needs authentication is declined authentication_required, nothing held', async () => {
    const err = (await rejectionOf(create('att_3ds', 'pm_card_authenticationRequired', { error_on_requires_action: true }))) as Stripe.errors.StripeCardError;
    expect(err.type).toBe('StripeCardError');
    expect(err.code).toBe('authentication_required');
    expect(err.decline_code).toBe('authentication_required');
    expect(err.payment_intent?.status).toBe('requires_payment_method');
    expect((await sandbox.ledger()).filter((e) => e.reference === 'att_3ds').every((e) => e.authorized === 0)).toBe(true);
  });

  it('without error_on_requires_action the same card waits for the customer (requires_action)', async () => {
    const pi = await create('att_3ds_wait', 'pm_card_authenticationRequired');
    expect(pi.status).toBe('requires_action');
    expect(pi.next_action?.type).toBe('use_stripe_sdk');
    const cancelled = await stripe.paymentIntents.cancel(pi.id);
    expect([cancelled.status, cancelled.next_action]).toEqual(['canceled', null]);
  });
});

describe('list and search', () => {
  it('the list sees a new PaymentIntent at once, filtered by created, with its metadata', async () => {
    const since = sandbox.clock.nowSeconds();
    const pi = await create('att_list');
    const listed = await stripe.paymentIntents.list({ created: { gte: since }, limit: 100 });
    expect(listed.data.find((x) => x.id === pi.id)?.metadata['attempt_id']).toBe('att_list');
    const before = await stripe.paymentIntents.list({ created: { lt: since }, limit: 100 });
    expect(before.data.some((x) => x.id === pi.id)).toBe(false);
  });

  it('search lags: a new PaymentIntent is not found until the lag has passed, then it is', async () => {
    const pi = await create('att_search');
    const query = "metadata['attempt_id']:'att_search'";
    expect((await stripe.paymentIntents.search({ query })).data).toHaveLength(0);
    await sandbox.advanceClock(31);
    const found = await stripe.paymentIntents.search({ query: `${query} AND status:'requires_capture'` });
    expect(found.data.map((x) => x.id)).toEqual([pi.id]);
    expect(found.object).toBe('search_result');
  });

  it('search pages with next_page, and refuses a query it cannot parse', async () => {
    for (const n of [1, 2, 3]) await create(`att_page_${n}`, 'pm_card_visa', { metadata: { attempt_id: `att_page_${n}`, batch: 'paged' } });
    await sandbox.advanceClock(31);
    const first = await stripe.paymentIntents.search({ query: "metadata['batch']:'paged'", limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const second = await stripe.paymentIntents.search({ query: "metadata['batch']:'paged'", limit: 2, page: first.next_page ?? '' });
    expect(second.data).toHaveLength(1);
    expect(second.has_more).toBe(false);
    const bad = (await rejectionOf(stripe.paymentIntents.search({ query: 'amount>5 OR currency:"eur"' }))) as Stripe.errors.StripeError;
    expect(bad.type).toBe('StripeInvalidRequestError');
  });
});

describe('the connector\'s lookup by attempt id', () => {
  it('reads at most LOOKUP_MAX_PAGES pages: a window it could not read to the end is unknown, never not_found', async () => {
    const connector = createConnector('stripe_test', {
      type: 'stripe', sandbox: true,
      settings: { secretKey: SECRET_KEY, webhookSecrets: ['whsec_x'], apiHost: '127.0.0.1', apiPort: sandbox.port, apiProtocol: 'http', lookupPageSize: 1 },
    });
    try {
      const sentAt = new Date(sandbox.clock.nowMs()).toISOString();
      for (let i = 0; i < LOOKUP_MAX_PAGES + 1; i++) await create(`att_crowd_${i}`);
      const q = await connector.query({ attemptId: 'att_nowhere', providerRef: null, amount: 1200, currency: 'EUR', sentAt });
      expect(q, JSON.stringify(q)).toMatchObject({ kind: 'unknown', reason: 'unexpected' });
      const found = await connector.query({ attemptId: 'att_crowd_3', providerRef: null, amount: 1200, currency: 'EUR', sentAt });
      expect(found, JSON.stringify(found)).toMatchObject({ kind: 'succeeded', amount: 1200 });
    } finally {
      await connector.close();
    }
  });
});
