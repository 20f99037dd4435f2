// Turns one provider-call effect into a connector call. Pure mapping plus the call itself: the
// worker decides whether to send, and the core decides what the answer means.

import type { ProviderCallEffect } from '../core/effects.ts';
import type { OperationRef } from '../core/inputs.ts';
import type { CallOutcome } from '../core/outcome.ts';
import type { Attempt, Payment } from '../core/payment.ts';
import type { AuthenticationRequest, BrowserInfo, Connector, ConnectorCard, PaymentMethodInput, PaymentToken } from '../connectors/contract.ts';
import { authenticationReturnPath } from '../resources/authentication-tokens.ts';

export interface StoredPaymentMethod {
  readonly tokens?: Readonly<Record<string, PaymentToken>>;
  readonly test_card?: string;
  /** A vaulted card (pmd_…): the worker asks the vault for the number at each authorization send. */
  readonly id?: string;
  /** What the merchant may see of the vaulted card, copied at creation (no number, no code). */
  readonly card?: StoredCardSummary;
  readonly brand?: string;
  readonly country?: string;
}

export interface StoredCardSummary {
  readonly brand: string;
  readonly last4: string;
  readonly exp_month: number;
  readonly exp_year: number;
}

export function paymentMethodFor(pm: StoredPaymentMethod | null, account: string, card?: ConnectorCard): PaymentMethodInput {
  const token = pm?.tokens?.[account];
  return { ...(token === undefined ? {} : { token }), ...(pm?.test_card === undefined ? {} : { testCard: pm.test_card }), ...(card === undefined ? {} : { card }) };
}

/** The operation an answer belongs to, as the core names it. */
export function operationRef(e: ProviderCallEffect): OperationRef {
  switch (e.op) {
    case 'capture':
      return { op: 'capture', captureId: e.captureId ?? '' };
    case 'refund':
      return { op: 'refund', refundId: e.refundId ?? '' };
    case 'void':
      return { op: 'void', ...(e.voidNo === undefined ? {} : { n: e.voidNo }) };
    case 'authorize':
      return { op: 'authorize', attemptId: e.attemptId, ...(e.sendNo === undefined ? {} : { sendNo: e.sendNo }) };
    case 'release':
      return { op: 'release', attemptId: e.attemptId, ...(e.providerKey === null ? {} : { providerKey: e.providerKey }) };
    case 'prepare':
    case 'query':
    case 'fence':
    case 'resume':
      return { op: e.op, attemptId: e.attemptId };
    case 'lookup': {
      // The core always names what a lookup reads (lookup-effect.ts); without it the row is a bug.
      if (e.lookup === undefined) throw new Error(`lookup effect for attempt ${e.attemptId} without its subject`);
      const { n, ...about } = e.lookup;
      return { op: 'lookup', about, n };
    }
  }
}

function missingRef(what: string): CallOutcome {
  // Nothing was sent: the request could not even be built.
  return { kind: 'not_sent', reason: 'local_validation', detail: `${what}: no provider reference` };
}

/**
 * What the provider needs to authenticate the customer: the merchant's settings, and the gateway's
 * return endpoint for this attempt when there is a merchant return_url and a public URL to reach
 * the gateway (recorded on the payment by the API that created it).
 */
/** payments.shopper as the API stored it (snake case). */
export interface StoredShopper {
  readonly browser_info?: {
    readonly user_agent: string; readonly accept_header: string; readonly language: string; readonly color_depth: number;
    readonly screen_height: number; readonly screen_width: number; readonly time_zone_offset: number; readonly java_enabled: boolean; readonly javascript_enabled?: boolean;
  };
  readonly shopper_ip?: string;
}

function browserInfoOf(s: StoredShopper | null): BrowserInfo | null {
  const b = s?.browser_info;
  if (b === undefined) return null;
  return {
    userAgent: b.user_agent, acceptHeader: b.accept_header, language: b.language, colorDepth: b.color_depth, screenHeight: b.screen_height,
    screenWidth: b.screen_width, timeZoneOffset: b.time_zone_offset, javaEnabled: b.java_enabled, ...(b.javascript_enabled === undefined ? {} : { javaScriptEnabled: b.javascript_enabled }),
  };
}

export function authenticationRequest(p: Payment, attempt: Attempt, e: ProviderCallEffect, shopper: StoredShopper | null = null): AuthenticationRequest {
  const settings = p.authentication;
  const returnUrl = settings?.returnUrl ?? null;
  const publicUrl = settings?.gatewayUrl ?? null;
  const tokenKey = settings?.tokenKey;
  const canReturn = returnUrl !== null && publicUrl !== null && tokenKey !== undefined && settings?.mode !== 'none';
  return {
    mode: settings?.mode ?? 'automatic',
    forced: e.forceAuthentication === true,
    // The same URL on every send of the attempt (its return token is derived, not drawn).
    returnUrl: canReturn ? `${publicUrl}${authenticationReturnPath(tokenKey, attempt.id)}` : null,
    origin: returnUrl === null ? null : new URL(returnUrl).origin,
    browserInfo: browserInfoOf(shopper),
    shopperIp: shopper?.shopper_ip ?? null,
  };
}

/** `card`: the vaulted card revealed for this authorization send (only ever in memory). */
export async function executeCall(connector: Connector, p: Payment, attempt: Attempt, e: ProviderCallEffect, pm: StoredPaymentMethod | null, shopper: StoredShopper | null = null, card?: ConnectorCard): Promise<CallOutcome> {
  const key = e.providerKey ?? '';
  const base = { paymentId: p.id, attemptId: attempt.id, amount: e.amount, currency: e.currency, idempotencyKey: key };
  switch (e.op) {
    case 'prepare':
      if (connector.prepare === undefined) return { kind: 'not_sent', reason: 'local_validation', detail: 'connector has no prepare' };
      return connector.prepare({ ...base, captureMethod: p.captureMethod, paymentMethod: paymentMethodFor(pm, attempt.connector) });
    case 'authorize':
      // Only a prepared attempt (the two-call shape) authorizes its prepared object. An attempt that
      // authorizes in one call resends exactly its first request, even once a lookup found the
      // provider's object: the same key with another request would be refused as a mismatch.
      return connector.authorize({
        ...base, captureMethod: p.captureMethod, paymentMethod: paymentMethodFor(pm, attempt.connector, card), providerRef: attempt.prepareCalls > 0 ? attempt.providerRef : null,
        authentication: authenticationRequest(p, attempt, e, shopper),
      });
    case 'resume':
      if (connector.resume === undefined) return { kind: 'not_sent', reason: 'local_validation', detail: 'connector has no resume' };
      return connector.resume({ ...base, providerRef: attempt.providerRef, returned: attempt.authentication?.returned ?? {} });
    case 'query':
      return connector.query({ attemptId: attempt.id, providerRef: attempt.providerRef, amount: e.amount, currency: e.currency, sentAt: attempt.firstSentAt });
    case 'fence':
      // Void by the provider's reference when we have one; otherwise cancel by our merchant reference.
      if (attempt.providerRef !== null) return connector.void({ ...base, providerRef: attempt.providerRef, amount: p.amount });
      if (connector.cancelByReference === undefined) return missingRef('fence');
      return connector.cancelByReference({ attemptId: attempt.id, idempotencyKey: key });
    case 'release':
      if (attempt.providerRef === null) return missingRef('release');
      // A release refund is its own record at the provider: its id names the release round.
      // Rows written before rounds were named carry no reference: the first round's is the refund id.
      if (p.captureMethod === 'automatic') {
        const refundId = e.refundId ?? `${attempt.id}_release`;
        return connector.refund({ ...base, providerRef: attempt.providerRef, refundId, reason: 'duplicate', reference: e.reference ?? refundId });
      }
      return connector.void({ ...base, providerRef: attempt.providerRef, ...(e.reference === undefined ? {} : { reference: e.reference }) });
    case 'capture': {
      if (attempt.providerRef === null) return missingRef('capture');
      const alreadyCaptured = p.captures.filter((c) => c.status === 'succeeded').reduce((s, c) => s + c.amount, 0);
      return connector.capture({ ...base, captureId: e.captureId ?? '', providerRef: attempt.providerRef, final: e.final ?? true, alreadyCaptured });
    }
    case 'void':
      if (attempt.providerRef === null) return missingRef('void');
      return connector.void({ ...base, providerRef: attempt.providerRef });
    case 'refund': {
      if (attempt.providerRef === null) return missingRef('refund');
      const refund = p.refunds.find((r) => r.id === e.refundId);
      return connector.refund({ ...base, providerRef: attempt.providerRef, refundId: e.refundId ?? '', reason: refund?.reason ?? null });
    }
    case 'lookup':
      return lookUp(connector, p, attempt, e);
  }
}

/** The lookup of an operation answered "already done": a read, whose failure is never proof of anything. */
function lookUp(connector: Connector, p: Payment, attempt: Attempt, e: ProviderCallEffect): Promise<CallOutcome> {
  const about = e.lookup;
  if (connector.lookupOperation === undefined) {
    return Promise.resolve({ kind: 'unknown', reason: 'not_found', detail: `${connector.type} has no lookup: its notification settles the operation` });
  }
  if (about === undefined || attempt.providerRef === null) return Promise.resolve({ kind: 'unknown', reason: 'unexpected', detail: 'lookup: no subject or no provider reference' });
  const base = { paymentId: p.id, attemptId: attempt.id, providerRef: attempt.providerRef, amount: e.amount, currency: e.currency };
  switch (about.op) {
    case 'capture': {
      const alreadyCaptured = p.captures.filter((c) => c.status === 'succeeded' && c.id !== about.captureId).reduce((s, c) => s + c.amount, 0);
      return connector.lookupOperation({ ...base, kind: 'capture', captureId: about.captureId, alreadyCaptured });
    }
    case 'refund':
      return connector.lookupOperation({ ...base, kind: 'refund', refundId: about.refundId });
    case 'release':
      // A release is a refund under automatic capture (its round's refund id on the effect), else a cancel.
      return connector.lookupOperation(p.captureMethod === 'automatic' ? { ...base, kind: 'refund', refundId: e.refundId ?? `${attempt.id}_release` } : { ...base, kind: 'cancel' });
    case 'void':
    case 'fence':
      return connector.lookupOperation({ ...base, kind: 'cancel' });
  }
}

/** Operations that bring new business go through the breaker; resolution work (query, fence, release, lookup) always goes out. */
export function usesBreaker(op: ProviderCallEffect['op']): boolean {
  return op === 'prepare' || op === 'authorize' || op === 'capture' || op === 'void' || op === 'refund';
}
