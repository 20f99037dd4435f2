// The Stripe connector's reconciliation record against the sandbox: charges do not embed their
// refunds (API version 2022-11-15 on) and an expanded sublist holds only its first 10, so the
// refunds that came back (failed after they succeeded) are read from GET /v1/refunds?charge=….

import type Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Connector } from '../../../src/connectors/contract.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { startSandbox, stripeConnectorFor, stripeFor } from './helpers.ts';

let sandbox: StripeSandbox;
let stripe: Stripe;
let connector: Connector;

beforeAll(async () => {
  sandbox = await startSandbox();
  stripe = stripeFor(sandbox);
  connector = stripeConnectorFor(sandbox);
});
afterAll(async () => {
  await connector.close();
  await sandbox.close();
});

it('a refund returned among twelve (the oldest, past an expanded sublist) is in the record', async () => {
  const from = new Date(sandbox.clock.nowMs() - 60_000);
  const pi = await stripe.paymentIntents.create({ amount: 12_000, currency: 'eur', confirm: true, payment_method: 'pm_card_visa', metadata: { attempt_id: 'att_twelve' } });
  const refunds: Stripe.Refund[] = [];
  for (let i = 0; i < 12; i++) refunds.push(await stripe.refunds.create({ payment_intent: pi.id, amount: 100 + i }));
  await sandbox.failRefund(refunds[0]!.id);
  const expanded = await stripe.charges.retrieve(pi.latest_charge as string, { expand: ['refunds'] });
  expect(expanded.refunds).toMatchObject({ has_more: true });
  expect(expanded.refunds!.data.map((r) => r.id)).not.toContain(refunds[0]!.id);
  const records = await connector.fetchReconciliationRecords!({ from, to: new Date(sandbox.clock.nowMs() + 60_000) });
  const mine = records.find((r) => r.providerRef === pi.id);
  const refunded = refunds.slice(1).reduce((sum, r) => sum + r.amount, 0);
  expect(mine).toMatchObject({ attemptId: 'att_twelve', captured: 12_000, refunded, refundsReturned: 100 });
});
