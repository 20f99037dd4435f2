// A mutable working copy of a payment used inside one step(); finalize() turns it back into an
// immutable aggregate, decides whether anything changed, and bumps the version exactly then.

import { withoutStalePage } from './authentication.ts';
import { isLegalEdge } from './states.ts';
import type { PaymentState } from './states.ts';
import type { Effect, MerchantEventType } from './effects.ts';
import type { Attempt, Capture, Payment, Refund, VoidOperation, RoutingDecision } from './payment.ts';
import type { ConnectorPolicy, CorePolicy } from './policy.ts';
import type { IdKind } from './ids.ts';

export interface StepEnv {
  readonly policies: Readonly<Record<string, ConnectorPolicy>>;
  readonly openBreakers: ReadonlySet<string>;
  /** Each connector's breaker reset time in ms (from its breaker settings); core.breakerResetMs when absent. */
  readonly breakerResetMs?: Readonly<Record<string, number>>;
  readonly core: CorePolicy;
  readonly maxAttempts: number;
  readonly newId: (kind: IdKind) => string;
}

export type IllegalCode = 'invalid_state' | 'amount_exceeds_authorized' | 'amount_exceeds_captured' | 'invalid_amount' | 'not_supported' | 'multicapture_unsupported' | 'too_many_metadata_keys';

export type StepResult =
  | {
      readonly kind: 'applied';
      readonly payment: Payment;
      readonly effects: readonly Effect[];
      readonly from: PaymentState;
      readonly to: PaymentState;
      readonly note: string;
    }
  | { readonly kind: 'noop'; readonly reason: string }
  | { readonly kind: 'illegal'; readonly code: IllegalCode; readonly reason: string };

/** step() tried an edge outside the table: a bug, or a fact the payment's state cannot take. */
export class IllegalEdgeError extends Error {
  override readonly name = 'IllegalEdgeError';
  constructor(readonly from: PaymentState, readonly to: PaymentState, why: string) {
    super(`step bug: illegal edge ${from} -> ${to} (${why})`);
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class Draft {
  readonly p: Mutable<Omit<Payment, 'attempts' | 'captures' | 'refunds'>>;
  readonly attempts: Attempt[];
  readonly captures: Capture[];
  readonly refunds: Refund[];
  readonly effects: Effect[] = [];
  readonly notes: string[] = [];

  constructor(
    readonly original: Payment,
    readonly now: Date,
    readonly env: StepEnv,
  ) {
    const { attempts, captures, refunds, ...rest } = original;
    this.p = { ...rest };
    this.attempts = [...attempts];
    this.captures = [...captures];
    this.refunds = [...refunds];
  }

  get nowIso(): string {
    return this.now.toISOString();
  }

  at(delayMs: number): string {
    return new Date(this.now.getTime() + delayMs).toISOString();
  }

  setState(to: PaymentState, note: string): void {
    if (this.p.state === to) return;
    if (!isLegalEdge(this.p.state, to)) throw new IllegalEdgeError(this.p.state, to, note);
    this.p.state = to;
    this.notes.push(note);
  }

  note(text: string): void {
    this.notes.push(text);
  }

  attempt(id: string): Attempt | undefined {
    return this.attempts.find((a) => a.id === id);
  }

  updateAttempt(id: string, patch: Partial<Attempt>): Attempt {
    const i = this.attempts.findIndex((a) => a.id === id);
    if (i < 0) throw new Error(`step bug: no attempt ${id}`);
    // Every change of an attempt passes here, so no path can leave a provider's page behind.
    const next = withoutStalePage({ ...this.attempts[i]!, ...patch });
    this.attempts[i] = next;
    return next;
  }

  updateCapture(id: string, patch: Partial<Capture>): Capture {
    const i = this.captures.findIndex((c) => c.id === id);
    if (i < 0) throw new Error(`step bug: no capture ${id}`);
    const next = { ...this.captures[i]!, ...patch };
    this.captures[i] = next;
    return next;
  }

  updateRefund(id: string, patch: Partial<Refund>): Refund {
    const i = this.refunds.findIndex((r) => r.id === id);
    if (i < 0) throw new Error(`step bug: no refund ${id}`);
    const next = { ...this.refunds[i]!, ...patch };
    this.refunds[i] = next;
    return next;
  }

  setVoidOp(v: VoidOperation): void {
    this.p.voidOp = v;
  }

  setRouting(r: RoutingDecision): void {
    this.p.routing = r;
  }

  emit(effect: Effect): void {
    this.effects.push(effect);
  }

  event(event: MerchantEventType, extra: { refundId?: string; captureId?: string } = {}): void {
    this.effects.push({ type: 'merchant_event', event, ...extra });
  }

  policy(connector: string): ConnectorPolicy {
    const pol = this.env.policies[connector];
    if (pol === undefined) throw new Error(`step bug: no policy for connector ${connector}`);
    return pol;
  }

  build(version: number): Payment {
    return { ...this.p, attempts: this.attempts, captures: this.captures, refunds: this.refunds, version };
  }

  finalize(): StepResult {
    const from = this.original.state;
    const to = this.p.state;
    const candidate = this.build(this.original.version);
    const changed = JSON.stringify(candidate) !== JSON.stringify(this.original);
    if (!changed && this.effects.length === 0) return { kind: 'noop', reason: this.notes.join('; ') || 'nothing changed' };
    if (from !== to) {
      const stateEvent = STATE_EVENTS[to];
      // Back to authorized after a refused capture or void is not a new authorization.
      const reverted = to === 'authorized' && (from === 'capturing' || from === 'voiding');
      if (stateEvent !== undefined && !reverted) this.event(stateEvent);
    }
    return { kind: 'applied', payment: this.build(this.original.version + 1), effects: this.effects, from, to, note: this.notes.join('; ') };
  }
}

// Merchant events that follow a state change. payment.captured is emitted per confirmed capture instead.
const STATE_EVENTS: Partial<Record<PaymentState, MerchantEventType>> = {
  requires_action: 'payment.requires_action',
  authorized: 'payment.authorized',
  declined: 'payment.declined',
  failed: 'payment.failed',
  voided: 'payment.voided',
  expired: 'payment.expired',
  needs_review: 'payment.needs_review',
};

export function noop(reason: string): StepResult {
  return { kind: 'noop', reason };
}

export function illegal(code: IllegalCode, reason: string): StepResult {
  return { kind: 'illegal', code, reason };
}
