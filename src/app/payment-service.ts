// What the merchant API (and the CLI, and tests) ask of the gateway, in domain terms. Each call
// is one transition (or the creating transaction); provider calls happen later, from the outbox.

import { newId } from '../core/ids.ts';
import type { Payment } from '../core/payment.ts';
import type { CaptureMethod } from '../core/payment.ts';
import type { PaymentInput } from '../core/inputs.ts';
import { select } from '../routing/select.ts';
import type { RouteDecision } from '../routing/select.ts';
import type { DbOrTx } from '../store/db.ts';
import { loadPayment } from '../store/payment-queries.ts';
import { createPayment, transition } from '../store/transition.ts';
import type { TransitionResult } from '../store/transition.ts';
import type { StoredPaymentMethod } from '../jobs/call-executor.ts';
import type { Runtime } from './runtime.ts';

export interface StartPaymentRequest {
  readonly amount: number;
  readonly currency: string;
  readonly reference: string;
  readonly captureMethod: CaptureMethod;
  readonly allowPartialAuthorization: boolean;
  readonly paymentMethod: StoredPaymentMethod;
  readonly metadata: Readonly<Record<string, string>>;
}

export type StartPaymentResult =
  | { readonly ok: true; readonly payment: Payment }
  | { readonly ok: false; readonly code: 'test_card_not_allowed' | 'no_candidate'; readonly message: string; readonly decision: RouteDecision };

export interface StartPaymentOptions {
  readonly paymentId?: string;
  /** More writes in the creating transaction (the API's idempotency record gets the payment id here). */
  readonly inTransaction?: (tx: DbOrTx, paymentId: string) => Promise<void>;
}

export async function startPayment(rt: Runtime, merchantId: string, req: StartPaymentRequest, opts: StartPaymentOptions = {}): Promise<StartPaymentResult> {
  const { snapshot } = rt.config.current();
  const id = opts.paymentId ?? newId('payment', rt.now().getTime());
  const routed = select(snapshot, {
    paymentId: id, amount: req.amount, currency: req.currency, merchantId,
    country: req.paymentMethod.country, brand: req.paymentMethod.brand, metadata: req.metadata,
    tokens: req.paymentMethod.tokens, testCard: req.paymentMethod.test_card,
  });
  if (!routed.ok && routed.code === 'test_card_not_allowed') return routed;
  // A payment no connector can take is still recorded (it fails at once), so the merchant sees why.
  const created = await createPayment(
    rt.database.db,
    {
      id, merchantId, reference: req.reference, amount: req.amount, currency: req.currency, captureMethod: req.captureMethod,
      allowPartialAuthorization: req.allowPartialAuthorization, routing: routed.decision, metadata: req.metadata,
    },
    rt.envs.current(snapshot.maxAttempts),
    {
      origin: 'api', now: rt.now, paymentMethod: req.paymentMethod, onCommitted: () => rt.relay.kick(),
      ...(opts.inTransaction === undefined ? {} : { inTransaction: (tx: DbOrTx) => opts.inTransaction!(tx, id) }),
    },
  );
  return { ok: true, payment: created.payment };
}

async function apply(rt: Runtime, merchantId: string, paymentId: string, input: PaymentInput, origin: 'api' | 'operator' = 'api'): Promise<TransitionResult> {
  const p = await loadPayment(rt.database.db, merchantId, paymentId);
  const env = await rt.envs.forSnapshot(rt.database.db, p?.routing.snapshot ?? rt.config.current().snapshot.version);
  return transition(rt.database.db, paymentId, input, origin, env, { merchantId, now: rt.now, onCommitted: () => rt.relay.kick() });
}

export function requestCapture(rt: Runtime, merchantId: string, payment: Payment, amount: number | undefined, final: boolean, captureId = newId('capture')): Promise<TransitionResult> {
  const remaining = payment.amountAuthorized - payment.amountCaptured;
  return apply(rt, merchantId, payment.id, { type: 'capture_requested', captureId, amount: amount ?? remaining, final });
}

export function requestVoid(rt: Runtime, merchantId: string, paymentId: string): Promise<TransitionResult> {
  return apply(rt, merchantId, paymentId, { type: 'void_requested' });
}

export function requestRefund(rt: Runtime, merchantId: string, payment: Payment, amount: number | undefined, reason: string | null, refundId = newId('refund')): Promise<TransitionResult> {
  const refundable = payment.amountCaptured - payment.refunds.filter((r) => r.status !== 'failed' && r.status !== 'reversed').reduce((s, r) => s + r.amount, 0);
  return apply(rt, merchantId, payment.id, { type: 'refund_requested', refundId, amount: amount ?? refundable, reason });
}

export function resolveByOperator(rt: Runtime, merchantId: string, paymentId: string, as: 'authorized' | 'failed' | 'voided', note: string): Promise<TransitionResult> {
  return apply(rt, merchantId, paymentId, { type: 'operator_resolved', as, note }, 'operator');
}

/** Polls until `done(payment)` or the timeout; returns the last payment seen. Works across processes. */
export async function waitForPayment(rt: Runtime, merchantId: string, paymentId: string, done: (p: Payment) => boolean, timeoutMs: number, pollMs = 25): Promise<Payment | null> {
  const deadline = Date.now() + timeoutMs;
  let p = await loadPayment(rt.database.db, merchantId, paymentId);
  while (p !== null && !done(p) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, pollMs));
    p = await loadPayment(rt.database.db, merchantId, paymentId);
  }
  return p;
}
