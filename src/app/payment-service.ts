// What the merchant API (and the CLI, and tests) ask of the gateway, in domain terms. Each call
// is one transition (or the creating transaction); provider calls happen later, from the outbox.

import { newId } from '../core/ids.ts';
import { newTokenKey } from '../resources/authentication-tokens.ts';
import type { Payment } from '../core/payment.ts';
import type { CaptureMethod } from '../core/payment.ts';
import type { PaymentInput } from '../core/inputs.ts';
import type { StoredKeyMode } from '../core/api-keys.ts';
import { paymentLivemode, select } from '../routing/select.ts';
import type { RouteDecision, SelectRefusalCode } from '../routing/select.ts';
import type { RoutingSnapshot } from '../routing/snapshot.ts';
import { connectorTokenProblem } from '../connectors/registry.ts';
import type { DbOrTx } from '../store/db.ts';
import { loadPayment } from '../store/payment-queries.ts';
import { createPayment, transition } from '../store/transition.ts';
import type { TransitionOptions, TransitionResult } from '../store/transition.ts';
import type { StoredPaymentMethod } from '../jobs/call-executor.ts';
import { PaymentWaits } from './payment-waits.ts';
import type { Runtime } from './runtime.ts';

export interface StartPaymentRequest {
  readonly amount: number;
  readonly currency: string;
  readonly reference: string;
  readonly captureMethod: CaptureMethod;
  readonly allowPartialAuthorization: boolean;
  readonly paymentMethod: StoredPaymentMethod;
  readonly metadata: Readonly<Record<string, string>>;
  /** Customer authentication: absent = automatic without a return URL (a card that needs it is declined). */
  readonly authentication?: { readonly mode: 'automatic' | 'challenge' | 'none'; readonly returnUrl: string | null };
  /** browser_info and shopper_ip as the API took them (snake case), stored with the payment. */
  readonly shopper?: Readonly<Record<string, unknown>>;
  /**
   * The mode of the key that asks: a test key's payment reaches only test accounts and is a test
   * payment, a live key's only live ones; absent or `any` (a legacy key) reaches every account.
   */
  readonly keyMode?: StoredKeyMode;
}

export type StartPaymentResult =
  | { readonly ok: true; readonly payment: Payment }
  /** The request's fault, nothing written: `field` is the API's dotted path of what to fix. */
  | { readonly ok: false; readonly code: Exclude<SelectRefusalCode, 'no_candidate'> | 'token_incomplete' | 'payment_method_unknown' | 'card_expired'; readonly message: string; readonly field: string; readonly decision: RouteDecision | null };

export interface StartPaymentOptions {
  readonly paymentId?: string;
  /** More writes in the creating transaction (the API's idempotency record gets the payment id here). */
  readonly inTransaction?: (tx: DbOrTx, paymentId: string) => Promise<void>;
}

export async function startPayment(rt: Runtime, merchantId: string, req: StartPaymentRequest, opts: StartPaymentOptions = {}): Promise<StartPaymentResult> {
  const { snapshot } = rt.config.current();
  const id = opts.paymentId ?? newId('payment', rt.now().getTime());
  const vaulted = await vaultedCardFor(rt, merchantId, req.paymentMethod);
  if (!vaulted.ok) return { ...vaulted, field: 'payment_method.id', decision: null };
  const paymentMethod = vaulted.paymentMethod;
  const routed = select(snapshot, {
    paymentId: id, amount: req.amount, currency: req.currency, merchantId,
    country: paymentMethod.country, brand: paymentMethod.brand ?? paymentMethod.card?.brand, metadata: req.metadata,
    tokens: paymentMethod.tokens, testCard: paymentMethod.test_card, vaultedCard: paymentMethod.id !== undefined, keyMode: req.keyMode,
  });
  if (!routed.ok && routed.code !== 'no_candidate') return { ok: false, code: routed.code, message: routed.message, field: routed.field ?? 'payment_method', decision: routed.decision };
  const lacking = tokenLackingWhatItsProviderNeeds(snapshot, req.paymentMethod.tokens);
  if (lacking !== null) return { ok: false, code: 'token_incomplete', message: lacking.message, field: `payment_method.tokens.${lacking.account}`, decision: routed.decision };
  // A payment no connector can take is still recorded (it fails at once), so the merchant sees why.
  const created = await createPayment(
    rt.database.db,
    {
      id, merchantId, livemode: paymentLivemode(snapshot, routed.decision, req.keyMode), reference: req.reference, amount: req.amount, currency: req.currency, captureMethod: req.captureMethod,
      allowPartialAuthorization: req.allowPartialAuthorization, routing: routed.decision, metadata: req.metadata,
      ...(req.authentication === undefined ? {} : { authentication: { ...req.authentication, gatewayUrl: rt.publicUrl, tokenKey: newTokenKey() } }),
    },
    rt.envs.current(snapshot.maxAttempts),
    {
      origin: 'api', now: rt.now, paymentMethod, ...(req.shopper === undefined ? {} : { shopper: req.shopper }), onCommitted: (ids) => rt.dispatch(ids),
      ...(opts.inTransaction === undefined ? {} : { inTransaction: (tx: DbOrTx) => opts.inTransaction!(tx, id) }),
    },
  );
  return { ok: true, payment: created.payment };
}

/**
 * A vaulted card (payment_method.id) must be this merchant's and not past its expiry month; the
 * payment keeps what the merchant may see of it (brand, last 4, expiry), never the number.
 */
async function vaultedCardFor(rt: Runtime, merchantId: string, pm: StoredPaymentMethod): Promise<
  { readonly ok: true; readonly paymentMethod: StoredPaymentMethod } | { readonly ok: false; readonly code: 'payment_method_unknown' | 'card_expired'; readonly message: string }
> {
  if (pm.id === undefined) return { ok: true, paymentMethod: pm };
  const card = await rt.vault.describe(merchantId, pm.id);
  // Another merchant's id reads as unknown: nothing says it exists.
  if (card === null) return { ok: false, code: 'payment_method_unknown', message: `payment_method.id ${pm.id} is not a payment method of this merchant` };
  const now = rt.now();
  if (card.expYear * 12 + card.expMonth < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) {
    return { ok: false, code: 'card_expired', message: `payment_method.id ${pm.id}: the card expired (${String(card.expMonth).padStart(2, '0')}/${card.expYear})` };
  }
  return { ok: true, paymentMethod: { ...pm, card: { brand: card.brand, last4: card.last4, exp_month: card.expMonth, exp_year: card.expYear } } };
}

/** The first configured account whose token lacks what its provider needs (accounts the config lacks are routing's business). */
function tokenLackingWhatItsProviderNeeds(snapshot: RoutingSnapshot, tokens: StoredPaymentMethod['tokens']): { account: string; message: string } | null {
  for (const [account, token] of Object.entries(tokens ?? {})) {
    const c = Object.hasOwn(snapshot.connectors, account) ? snapshot.connectors[account] : undefined;
    const problem = c === undefined ? null : connectorTokenProblem(c.type, token);
    if (problem !== null) return { account, message: `${account}: ${problem}` };
  }
  return null;
}

/**
 * `payment`: the caller's fresh read of it, if it has one — its routing snapshot (fixed at
 * creation) picks the env, and transition() starts from it (a stale one is re-read there).
 */
async function apply(rt: Runtime, merchantId: string, paymentId: string, input: PaymentInput, origin: 'api' | 'operator' = 'api', payment?: Payment, inTransaction?: TransitionOptions['inTransaction']): Promise<TransitionResult> {
  const p = payment ?? (await loadPayment(rt.database.db, merchantId, paymentId));
  const env = await rt.envs.forSnapshot(rt.database.db, p?.routing.snapshot ?? rt.config.current().snapshot.version);
  return transition(rt.database.db, paymentId, input, origin, env, {
    merchantId, now: rt.now, onCommitted: (ids) => rt.dispatch(ids), ...(p === null ? {} : { loaded: p }), ...(inTransaction === undefined ? {} : { inTransaction }),
  });
}

export function requestCapture(rt: Runtime, merchantId: string, payment: Payment, amount: number | undefined, final: boolean, captureId = newId('capture')): Promise<TransitionResult> {
  const remaining = payment.amountAuthorized - payment.amountCaptured;
  return apply(rt, merchantId, payment.id, { type: 'capture_requested', captureId, amount: amount ?? remaining, final }, 'api', payment);
}

/**
 * The customer's browser is back from the provider's page: what it brought (only the fields the
 * resume needs) is recorded, and the resume goes out as an outbox call. A replay is a no-op.
 */
export function recordCustomerReturn(rt: Runtime, payment: Payment, attemptId: string, returned: Readonly<Record<string, string>>): Promise<TransitionResult> {
  return apply(rt, payment.merchantId, payment.id, { type: 'customer_returned', attemptId, returned }, 'api', payment);
}

/** The merchant's change to the metadata: one transition, the state unchanged, a payment.updated event. */
export function updateMetadata(rt: Runtime, merchantId: string, payment: Payment, metadata: Readonly<Record<string, string | null>>): Promise<TransitionResult> {
  return apply(rt, merchantId, payment.id, { type: 'metadata_updated', metadata }, 'api', payment);
}

export function requestVoid(rt: Runtime, merchantId: string, paymentId: string): Promise<TransitionResult> {
  return apply(rt, merchantId, paymentId, { type: 'void_requested' });
}

export function requestRefund(rt: Runtime, merchantId: string, payment: Payment, amount: number | undefined, reason: string | null, refundId = newId('refund')): Promise<TransitionResult> {
  const refundable = payment.amountCaptured - payment.refunds.filter((r) => r.status !== 'failed' && r.status !== 'reversed').reduce((s, r) => s + r.amount, 0);
  return apply(rt, merchantId, payment.id, { type: 'refund_requested', refundId, amount: amount ?? refundable, reason }, 'api', payment);
}

/**
 * The operator's resolution: as, note, and who, why an override, what the provider's records
 * showed (all kept in the input on the transition row). `inTransaction`: more writes in the
 * transition's transaction (the operator's audit row, written when it applied).
 */
export function resolveByOperator(
  rt: Runtime, merchantId: string, paymentId: string, input: Omit<Extract<PaymentInput, { type: 'operator_resolved' }>, 'type'>, inTransaction?: TransitionOptions['inTransaction'],
): Promise<TransitionResult> {
  return apply(rt, merchantId, paymentId, { type: 'operator_resolved', ...input }, 'operator', undefined, inTransaction);
}

const waitsByDb = new WeakMap<object, PaymentWaits>();

/** The runtime's payment waits (a runtime built without them gets in-process ones, created on first use). */
export function paymentWaits(rt: Runtime): PaymentWaits {
  if (rt.waits !== undefined) return rt.waits;
  let w = waitsByDb.get(rt.database.db);
  if (w === undefined) {
    w = new PaymentWaits(rt.database.db, { fallbackMs: 100 });
    waitsByDb.set(rt.database.db, w);
  }
  return w;
}

/**
 * Waits until `done(payment)` or the timeout; returns the last payment seen. Woken by PaymentWaits
 * when a commit changed the payment: a commit in this process hands over the version it wrote,
 * which is checked without a read (a version that is not done yet needs no read at all); a wake
 * from another process, or the fallback interval, re-reads it, so it works across processes too.
 * `pollMs` is the longest it sleeps between checks. Callers answer from their own read after it.
 */
export async function waitForPayment(rt: Runtime, merchantId: string, paymentId: string, done: (p: Payment) => boolean, timeoutMs: number, pollMs?: number): Promise<Payment | null> {
  const deadline = Date.now() + timeoutMs;
  const watch = paymentWaits(rt).watch(paymentId);
  try {
    let p = await loadPayment(rt.database.db, merchantId, paymentId);
    while (p !== null && !done(p) && Date.now() < deadline) {
      const committed = await watch.next(Math.min(pollMs ?? Infinity, deadline - Date.now()));
      p = committed !== null && committed.merchantId === merchantId && committed.version > p.version
        ? committed
        : await loadPayment(rt.database.db, merchantId, paymentId);
    }
    return p;
  } finally {
    watch.close();
  }
}
