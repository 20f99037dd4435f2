// The Stripe v1 endpoints the sandbox serves and the fault op each one counts as.

import type { FaultOp } from '../shared/control.ts';
import { listBalanceTransactions, listEvents, retrieveBalanceTransaction } from './balance.ts';
import type { StripeLoadKind } from './aggregates.ts';
import type { OperationContext } from './context.ts';
import { attachPaymentMethod, createCustomer } from './customers.ts';
import type { FormParams } from './form-encoding.ts';
import type { StripeObject } from './objects.ts';
import {
  cancelPaymentIntent, capturePaymentIntent, confirmPaymentIntent, createPaymentIntent, listPaymentIntents, retrievePaymentIntent,
} from './payment-intents.ts';
import { createRefund, listRefunds, retrieveCharge, retrieveDispute, retrieveRefund } from './refunds.ts';
import { searchPaymentIntents } from './search.ts';
import { closeOpenDispute, updateDispute } from './dispute-responses.ts';
import { createFile, retrieveFile } from './files.ts';

export interface StripeRoute {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  /** What the request reads from the sandbox database (aggregates.ts loadSpecOf). */
  readonly loads: StripeLoadKind;
  faultOp(params: FormParams): FaultOp | null;
  run(ctx: OperationContext, id: string, params: FormParams): StripeObject;
}

const ID = '([A-Za-z0-9_]+)';
const none = (): null => null;

export const STRIPE_ROUTES: readonly StripeRoute[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/payment_intents$/,
    loads: 'create',
    // Creating with confirm=true authorizes: it is the authorize fault's target too.
    faultOp: (params) => (params['confirm'] === 'true' ? 'authorize' : 'create'),
    run: (ctx, _id, params) => createPaymentIntent(ctx, params),
  },
  { method: 'GET', pattern: /^\/v1\/payment_intents$/, loads: 'list', faultOp: none, run: (ctx, _id, params) => listPaymentIntents(ctx, params) },
  // Before the :id route, which would take "search" for an id.
  { method: 'GET', pattern: /^\/v1\/payment_intents\/search$/, loads: 'list', faultOp: none, run: (ctx, _id, params) => searchPaymentIntents(ctx, params) },
  // The retrieve is the resume after the customer's authentication (and a query's lookup by id): faults op `resume`.
  { method: 'GET', pattern: new RegExp(`^/v1/payment_intents/${ID}$`), loads: 'payment_intent', faultOp: () => 'resume', run: retrievePaymentIntent },
  { method: 'POST', pattern: new RegExp(`^/v1/payment_intents/${ID}/confirm$`), loads: 'payment_intent', faultOp: () => 'authorize', run: confirmPaymentIntent },
  { method: 'POST', pattern: new RegExp(`^/v1/payment_intents/${ID}/capture$`), loads: 'payment_intent', faultOp: () => 'capture', run: capturePaymentIntent },
  { method: 'POST', pattern: new RegExp(`^/v1/payment_intents/${ID}/cancel$`), loads: 'payment_intent', faultOp: () => 'void', run: cancelPaymentIntent },
  { method: 'POST', pattern: /^\/v1\/refunds$/, loads: 'create', faultOp: () => 'refund', run: (ctx, _id, params) => createRefund(ctx, params) },
  { method: 'GET', pattern: /^\/v1\/refunds$/, loads: 'refunds', faultOp: none, run: (ctx, _id, params) => listRefunds(ctx, params) },
  { method: 'GET', pattern: new RegExp(`^/v1/refunds/${ID}$`), loads: 'child', faultOp: none, run: retrieveRefund },
  { method: 'GET', pattern: new RegExp(`^/v1/charges/${ID}$`), loads: 'child', faultOp: none, run: retrieveCharge },
  { method: 'GET', pattern: new RegExp(`^/v1/disputes/${ID}$`), loads: 'child', faultOp: none, run: (ctx, id) => retrieveDispute(ctx, id) },
  { method: 'POST', pattern: new RegExp(`^/v1/disputes/${ID}$`), loads: 'dispute_update', faultOp: none, run: updateDispute },
  { method: 'POST', pattern: new RegExp(`^/v1/disputes/${ID}/close$`), loads: 'child', faultOp: none, run: closeOpenDispute },
  // multipart/form-data (protocol.ts parses it); stripe-node sends it to files.stripe.com unless a host is set.
  { method: 'POST', pattern: /^\/v1\/files$/, loads: 'file', faultOp: none, run: (ctx, _id, params) => createFile(ctx, params) },
  { method: 'GET', pattern: new RegExp(`^/v1/files/${ID}$`), loads: 'file', faultOp: none, run: (ctx, id) => retrieveFile(ctx, id) },
  { method: 'GET', pattern: /^\/v1\/balance_transactions$/, loads: 'balance', faultOp: none, run: (ctx, _id, params) => listBalanceTransactions(ctx, params) },
  { method: 'GET', pattern: new RegExp(`^/v1/balance_transactions/${ID}$`), loads: 'child', faultOp: none, run: retrieveBalanceTransaction },
  { method: 'GET', pattern: /^\/v1\/events$/, loads: 'events', faultOp: none, run: (ctx, _id, params) => listEvents(ctx, params) },
  { method: 'POST', pattern: /^\/v1\/customers$/, loads: 'customer_create', faultOp: none, run: (ctx, _id, params) => createCustomer(ctx, params) },
  { method: 'POST', pattern: new RegExp(`^/v1/payment_methods/${ID}/attach$`), loads: 'attach', faultOp: none, run: attachPaymentMethod },
];

export function matchStripeRoute(method: string, path: string): { route: StripeRoute; id: string } | null {
  for (const route of STRIPE_ROUTES) {
    if (route.method !== method) continue;
    const match = route.pattern.exec(path);
    if (match) return { route, id: match[1] ?? '' };
  }
  return null;
}
