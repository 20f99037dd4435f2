// Every object the Stripe sandbox returns has every top-level key that Stripe's own fixtures
// (fixtures3.json from stripe/openapi, in ../shared) have for the same type.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { startSandbox, startWebhookReceiver, stripeFor, WEBHOOK_SECRET } from './helpers.ts';
import type { WebhookReceiver } from './helpers.ts';

const fixtures = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../fixtures/provider-specs/stripe/fixtures3.json'), 'utf8')) as {
  resources: Record<string, Record<string, unknown>>;
};

function missingKeys(type: string, object: unknown): string[] {
  const fixture = fixtures.resources[type];
  if (fixture === undefined) throw new Error(`no fixture for ${type}`);
  return Object.keys(fixture).filter((key) => !(key in (object as Record<string, unknown>)));
}

let sandbox: StripeSandbox;
let receiver: WebhookReceiver;
let stripe: Stripe;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  sandbox = await startSandbox({ webhook: { url: receiver.url, secret: WEBHOOK_SECRET } });
  stripe = stripeFor(sandbox);
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

describe('response shapes match fixtures3.json', () => {
  it('payment_intent, charge, refund, dispute and event carry every fixture key', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' });
    // fixtures3.json shows includable fields expanded: `refunds` is on a charge only with expand[]=refunds (API version 2022-11-15 on).
    const charge = await stripe.charges.retrieve(pi.latest_charge as string, { expand: ['refunds'] });
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
    const dispute = await sandbox.createDispute(pi.id);
    await sandbox.webhooksIdle();
    const [first] = receiver.received;
    const event = stripe.webhooks.constructEvent(first?.body ?? '', first?.signature ?? '', WEBHOOK_SECRET);
    const declined = await stripe.paymentIntents
      .create({ amount: 1000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa_chargeDeclined' })
      .catch((err: Stripe.errors.StripeCardError) => err.payment_intent);

    expect(pi.object).toBe('payment_intent');
    expect(missingKeys('payment_intent', pi)).toEqual([]);
    expect(missingKeys('payment_intent', declined)).toEqual([]);
    expect(missingKeys('payment_intent', await stripe.paymentIntents.retrieve(pi.id))).toEqual([]);
    expect(missingKeys('charge', charge)).toEqual([]);
    expect(missingKeys('refund', refund)).toEqual([]);
    expect(missingKeys('dispute', dispute)).toEqual([]);
    expect(missingKeys('event', event)).toEqual([]);
    expect(missingKeys('payment_intent', event.data.object)).toEqual([]);
  });

  it('balance_transaction (listed, retrieved) and a listed event carry every fixture key; a refund names its balance transaction', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' });
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 100 });
    const listed = await stripe.balanceTransactions.list({ created: { gte: pi.created }, limit: 100 });
    const mine = listed.data.filter((t) => t.source === pi.latest_charge || t.source === refund.id);
    expect(mine.map((t) => [t.type, t.amount, t.net])).toEqual([['refund', -100, -100], ['charge', 1000, 1000]]);
    for (const t of mine) expect(missingKeys('balance_transaction', t)).toEqual([]);
    expect(missingKeys('balance_transaction', await stripe.balanceTransactions.retrieve(refund.balance_transaction as string))).toEqual([]);
    const [event] = (await stripe.events.list({ created: { gte: pi.created }, limit: 1 })).data;
    expect(missingKeys('event', event)).toEqual([]);
  });
});
