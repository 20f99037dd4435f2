// Shared fixtures for core tests: two connector accounts with different capabilities.
import { DEFAULT_CORE_POLICY, newPayment } from '../../../src/core/index.ts';
import type { ConnectorPolicy, NewPaymentRequest, Payment, StepEnv } from '../../../src/core/index.ts';

const HOUR = 3_600_000;

export const STRIPE_LIKE: ConnectorPolicy = {
  maxKeyLength: 255,
  keyRetentionMs: 24 * HOUR,
  authHoldMs: 7 * 24 * HOUR,
  capabilities: {
    manualCapture: true, partialCapture: true, multicapture: true, partialRefund: true,
    queryByReference: true, queryByMerchantReference: false, cancelByMerchantReference: false, preparesAuthorization: true, asyncModifications: false,
    looksUpOperations: true,
  },
};

export const ADYEN_LIKE: ConnectorPolicy = {
  // A short key limit forces the hashed form of provider keys in tests.
  maxKeyLength: 24,
  keyRetentionMs: 7 * 24 * HOUR,
  authHoldMs: 28 * 24 * HOUR,
  capabilities: {
    manualCapture: true, partialCapture: true, multicapture: false, partialRefund: true,
    queryByReference: false, queryByMerchantReference: false, cancelByMerchantReference: true, preparesAuthorization: false, asyncModifications: true,
    cancelRefusedOnceCaptured: true,
  },
};

let counter = 0;
export function seqId(kind: string): string {
  counter += 1;
  return `${kind.slice(0, 3)}_${counter.toString().padStart(26, '0')}`;
}

export function makeEnv(over: Partial<StepEnv> = {}): StepEnv {
  return {
    policies: { stripe_a: STRIPE_LIKE, adyen_b: ADYEN_LIKE },
    openBreakers: new Set(),
    core: DEFAULT_CORE_POLICY,
    maxAttempts: 3,
    newId: (kind) => seqId(kind),
    ...over,
  };
}

export const T0 = new Date('2026-01-01T00:00:00.000Z');

export function request(over: Partial<NewPaymentRequest> = {}): NewPaymentRequest {
  return {
    id: seqId('pay'),
    merchantId: 'mer_1',
    livemode: false,
    reference: 'order-1',
    amount: 1000,
    currency: 'EUR',
    captureMethod: 'manual',
    allowPartialAuthorization: false,
    routing: { snapshot: 'v1', rule: 'default', candidates: ['stripe_a', 'adyen_b'], skipped: [] },
    metadata: {},
    ...over,
  };
}

export function created(over: Partial<NewPaymentRequest> = {}, env: StepEnv = makeEnv()): Payment {
  return newPayment(request(over), T0, env).payment;
}

import { step } from '../../../src/core/index.ts';
import type { CallOutcome, Effect, PaymentInput, PaymentState, StepResult, ProviderCallEffect } from '../../../src/core/index.ts';

/** Drives one payment through step() the way the store does: keep the new aggregate only when applied. */
export class Sim {
  payment: Payment;
  now: Date;
  readonly edges: [PaymentState, PaymentState][] = [];
  readonly effects: Effect[] = [];
  last: StepResult | null = null;

  constructor(
    readonly env: StepEnv = makeEnv(),
    over: Partial<NewPaymentRequest> = {},
  ) {
    this.now = T0;
    const r = newPayment(request(over), T0, env);
    this.payment = r.payment;
    this.effects.push(...r.effects);
    this.edges.push(['created', r.to]);
  }

  apply(input: PaymentInput): StepResult {
    const r = step(this.payment, input, this.now, this.env);
    this.last = r;
    if (r.kind === 'applied') {
      if (r.from !== r.to) this.edges.push([r.from, r.to]);
      this.payment = r.payment;
      this.effects.push(...r.effects);
    }
    return r;
  }

  advance(ms: number): void {
    this.now = new Date(this.now.getTime() + ms);
  }

  get state(): PaymentState {
    return this.payment.state;
  }

  get attempt() {
    return this.payment.attempts[this.payment.attempts.length - 1]!;
  }

  calls(op?: ProviderCallEffect['op']): ProviderCallEffect[] {
    return this.effects.filter((e): e is ProviderCallEffect => e.type === 'provider_call' && (op === undefined || e.op === op));
  }

  /**
   * Answers every lookup the core writes "nothing found" until it writes no more (it parks the
   * operation past its bound): an operation whose outcome stays unknown is looked up before it parks.
   */
  lookupsFindNothing(): void {
    for (let input = this.nextLookupFindsNothing(); input !== null; input = this.nextLookupFindsNothing()) this.apply(input);
  }

  /** The latest lookup call the core wrote. */
  lastLookup(): ProviderCallEffect {
    return this.calls('lookup').at(-1)!;
  }

  /** The answer "nothing found" to the latest lookup not answered yet (null: none), for a test to apply. */
  nextLookupFindsNothing(): PaymentInput | null {
    const last = this.calls('lookup').at(-1);
    if (last === undefined || last.lookup === undefined || this.answeredLookups.has(last)) return null;
    this.answeredLookups.add(last);
    const { n, ...about } = last.lookup;
    return { type: 'call_result', ref: { op: 'lookup', about, n }, outcome: { kind: 'unknown', reason: 'not_found', detail: 'nothing found' } };
  }

  private readonly answeredLookups = new Set<ProviderCallEffect>();

  /** Answers the attempt's preparatory call, if the connector needs one. */
  prepared(ref = 'pi_1'): void {
    if (this.attempt.status === 'preparing') this.apply({ type: 'call_result', ref: { op: 'prepare', attemptId: this.attempt.id }, outcome: { kind: 'succeeded', providerRef: ref, amount: 0 } });
  }

  authorize(outcome: CallOutcome): StepResult {
    this.prepared();
    return this.apply({ type: 'call_result', ref: { op: 'authorize', attemptId: this.attempt.id }, outcome });
  }
}

export const approved = (amount = 1000, providerRef = 'psp_1'): CallOutcome => ({ kind: 'succeeded', providerRef, amount });
export const declined = (cls: 'hard' | 'soft', retryElsewhere: boolean): CallOutcome => ({ kind: 'declined', class: cls, retryElsewhere, code: cls === 'hard' ? 'stolen_card' : 'processing_error', providerCode: 'x' });
export const unknown = (reason: 'timeout' | 'not_found' = 'timeout'): CallOutcome => ({ kind: 'unknown', reason });
export const notSent = (reason: 'connection_refused' | 'breaker_open' = 'connection_refused'): CallOutcome => ({ kind: 'not_sent', reason });

/** A payment the customer can be sent to authenticate for (a merchant return_url). */
export const withReturnUrl = { authentication: { mode: 'automatic' as const, returnUrl: 'https://shop.example/return' } };
/** The provider's answer asking for a redirect to its authentication page. */
export const challenge = (providerRef = 'pi_1', url = 'https://provider.example/3ds/1'): CallOutcome => ({
  kind: 'action_required', action: 'redirect_to_url', providerRef, redirect: { url, method: 'GET' },
});

/** The answer `outcome` to the lookup call `e`, as the worker reports it. */
export function lookupAnswer(e: ProviderCallEffect, outcome: CallOutcome): PaymentInput {
  const { n, ...about } = e.lookup!;
  return { type: 'call_result', ref: { op: 'lookup', about, n }, outcome };
}
