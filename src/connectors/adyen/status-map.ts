// Adyen answers -> CallOutcome. resultCode is mapped exhaustively; a value this code does not know
// maps to unknown (resolve later), never to succeeded or declined. Refusals are HTTP 200 values.

import type { CallOutcome, Unknown } from '../../core/outcome.ts';
import type { DeclineTable } from '../contract.ts';
import { declinedOutcome } from '../decline-table.ts';
import { fromAdyenValue } from './currencies.ts';
import { declineCodeForRefusal } from './refusal-reasons.ts';

export const ADYEN_RESULT_CODES = [
  'AuthenticationFinished', 'AuthenticationNotRequired', 'Authorised', 'Cancelled', 'ChallengeShopper', 'Error', 'IdentifyShopper',
  'PartiallyAuthorised', 'Pending', 'PresentToShopper', 'Received', 'RedirectShopper', 'Refused', 'Success',
] as const;
export type AdyenResultCode = (typeof ADYEN_RESULT_CODES)[number];

export interface Asked {
  /** Gateway (ISO 4217) minor units: what Adyen echoes is converted back before comparing. */
  readonly amount: number;
  readonly currency: string;
  /** The merchant reference sent (the attempt id). */
  readonly reference: string;
}

/** The fields of a PaymentResponse the gateway reads; everything is optional on the wire. */
export interface PaymentAnswer {
  readonly pspReference?: string | undefined;
  readonly resultCode?: string | undefined;
  readonly refusalReason?: string | undefined;
  readonly refusalReasonCode?: string | undefined;
  readonly merchantReference?: string | undefined;
  readonly amount?: WireAmount | null | undefined;
  /** RedirectShopper / ChallengeShopper / IdentifyShopper: what the shopper must do (v72 CheckoutRedirectAction, CheckoutThreeDS2Action, ...). */
  readonly action?: ActionAnswer | null | undefined;
}

/** The fields of an Adyen action the gateway reads. */
export interface ActionAnswer {
  readonly type?: string | undefined;
  readonly url?: string | undefined;
  readonly method?: string | undefined;
  readonly data?: Readonly<Record<string, string>> | null | undefined;
}

/**
 * A redirect action (v72 CheckoutRedirectAction: type redirect, url, method GET or POST with data)
 * is what the gateway can present; a threeDS2 action (a token for Adyen's JavaScript component) is not.
 */
export function redirectOf(action: ActionAnswer | null | undefined): { url: string; method: 'GET' | 'POST'; data?: Readonly<Record<string, string>> } | undefined {
  if (action?.type !== 'redirect' || typeof action.url !== 'string' || action.url === '') return undefined;
  if (action.method === 'POST') return { url: action.url, method: 'POST', ...(action.data ? { data: { ...action.data } } : {}) };
  return { url: action.url, method: 'GET' };
}


export interface WireAmount {
  readonly value?: number | undefined;
  readonly currency?: string | undefined;
}

function isResultCode(v: unknown): v is AdyenResultCode {
  return typeof v === 'string' && (ADYEN_RESULT_CODES as readonly string[]).includes(v);
}

/** An echoed Adyen amount in gateway (ISO) minor units; null when it has none or no whole ISO value. */
export function echoedMinor(echoed: WireAmount | null | undefined): number | null {
  if (echoed?.value === undefined || echoed.currency === undefined) return null;
  const back = fromAdyenValue(echoed.value, echoed.currency);
  return back.ok ? back.value : null;
}

/** Amount, currency and reference Adyen echoes must be ours; a partial authorization may be lower. Compared in ISO units. */
function integrityProblem(answer: PaymentAnswer, asked: Asked, psp: string, partialAllowed: boolean): Unknown | null {
  const echoed = answer.amount ?? undefined;
  const mismatch = (detail: string): Unknown => ({ kind: 'unknown', reason: 'integrity_mismatch', providerRef: psp, alert: true, detail });
  if (answer.merchantReference !== undefined && answer.merchantReference !== asked.reference) {
    return mismatch(`sent reference ${asked.reference}, Adyen echoed ${answer.merchantReference}`);
  }
  if (echoed?.value === undefined && echoed?.currency === undefined) return null;
  const minor = echoedMinor(echoed);
  const okValue = minor !== null && (minor === asked.amount || (partialAllowed && minor > 0 && minor < asked.amount));
  if (echoed.currency === asked.currency && okValue) return null;
  return mismatch(`asked ${asked.amount} ${asked.currency} (ISO minor units), Adyen echoed value ${echoed.value ?? '?'} ${echoed.currency ?? '?'} (Adyen's decimals)`);
}

function declined(answer: PaymentAnswer, psp: string, status: AdyenResultCode, table: DeclineTable, fallback: { code: string; providerCode: string }): CallOutcome {
  const providerCode = answer.refusalReasonCode;
  const facts = providerCode !== undefined && providerCode !== '' ? { code: declineCodeForRefusal(providerCode), providerCode } : fallback;
  return declinedOutcome(table, { ...facts, providerRef: psp, providerStatus: status, ...(answer.refusalReason !== undefined && { message: answer.refusalReason }) });
}

/** The outcome of a /payments answer (first answer or a same-key replay). */
export function paymentOutcome(answer: PaymentAnswer, asked: Asked, table: DeclineTable): CallOutcome {
  const psp = answer.pspReference;
  const status = answer.resultCode;
  // An action answer may come without a pspReference: the attempt is then named by our reference
  // (the attempt id), which Adyen's cancel-by-reference and notifications use.
  if ((status === 'RedirectShopper' || status === 'ChallengeShopper' || status === 'IdentifyShopper') && (typeof psp !== 'string' || psp === '')) {
    const redirect = redirectOf(answer.action);
    return { kind: 'action_required', action: answer.action?.type ?? status, ...(redirect === undefined ? {} : { redirect }) };
  }
  if (typeof psp !== 'string' || psp === '' || !isResultCode(status)) {
    if (typeof status === 'string' && typeof psp === 'string' && psp !== '') {
      return { kind: 'unknown', reason: 'unexpected', providerRef: psp, detail: `resultCode ${status}` };
    }
    return { kind: 'unknown', reason: 'unparseable', detail: 'the /payments answer has no pspReference or resultCode' };
  }
  const mismatch = integrityProblem(answer, asked, psp, status === 'PartiallyAuthorised');
  if (mismatch !== null) return mismatch;
  const base = { providerRef: psp, providerStatus: status };
  switch (status) {
    case 'Authorised':
    case 'Success':
    case 'PartiallyAuthorised':
      // The integrity check passed, so an echoed amount converts; no echo means all of it.
      return { kind: 'succeeded', ...base, amount: echoedMinor(answer.amount) ?? asked.amount, currency: asked.currency };
    case 'Refused':
      return declined(answer, psp, status, table, { code: 'generic_decline', providerCode: 'Refused' });
    case 'Error':
      return declined(answer, psp, status, table, { code: 'adyen_unknown', providerCode: 'Error' });
    case 'Cancelled':
      // Cancelled before processing completed (our technical cancel got there first): it can never charge.
      return declined(answer, psp, status, table, { code: 'cancelled', providerCode: 'Cancelled' });
    case 'Pending':
    case 'Received':
      return { kind: 'pending', ...base };
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper':
    case 'PresentToShopper': {
      const redirect = redirectOf(answer.action);
      return { kind: 'action_required', providerRef: psp, action: answer.action?.type ?? status, ...(redirect === undefined ? {} : { redirect }) };
    }
    case 'AuthenticationFinished':
    case 'AuthenticationNotRequired':
      // Standalone 3DS results: no authorization was attempted, but none is proven absent either.
      return { kind: 'unknown', reason: 'unexpected', providerRef: psp, detail: `resultCode ${status} from /payments` };
  }
}

/**
 * The outcome of a /payments/details answer (the resume after the shopper's return). A
 * redirectResult is the browser's to send, so the answer must be about the attempt's own payment:
 * a pspReference other than the attempt's, or another merchantReference, is a mismatch (unknown,
 * alerted, never an approval); a final answer without both references is not the attempt's word on
 * its own — pending, so its AUTHORISATION notification decides. A known reference is never replaced.
 */
export function resumeOutcome(answer: PaymentAnswer, asked: Asked, knownRef: string | null, table: DeclineTable): CallOutcome {
  const psp = typeof answer.pspReference === 'string' && answer.pspReference !== '' ? answer.pspReference : null;
  const ref = knownRef ?? psp;
  const mismatch = (detail: string): Unknown => ({ kind: 'unknown', reason: 'integrity_mismatch', ...(ref === null ? {} : { providerRef: ref }), alert: true, detail });
  if (knownRef !== null && psp !== null && psp !== knownRef) return mismatch(`/payments/details answered for pspReference ${psp}; the attempt is ${knownRef}`);
  if (answer.merchantReference !== undefined && answer.merchantReference !== asked.reference) {
    return mismatch(`/payments/details answered for merchantReference ${answer.merchantReference}; the attempt is ${asked.reference}`);
  }
  // Read as the attempt's (its known reference standing in for a missing one), then judged below.
  const o = paymentOutcome({ ...answer, pspReference: ref ?? undefined }, asked, table);
  const named = psp !== null && answer.merchantReference !== undefined;
  if ((o.kind === 'succeeded' || o.kind === 'declined') && !named) {
    const detail = `/payments/details answered ${answer.resultCode ?? 'no resultCode'} without its pspReference and merchantReference: the AUTHORISATION notification decides`;
    return ref === null ? { kind: 'unknown', reason: 'unparseable', detail } : { kind: 'pending', providerRef: ref, ...(answer.resultCode === undefined ? {} : { providerStatus: answer.resultCode }) };
  }
  return o;
}

/** The fields of a modification's 201 answer the gateway reads. */
export interface ModificationAnswer {
  readonly pspReference?: string | undefined;
  readonly paymentPspReference?: string | undefined;
  readonly status?: string | undefined;
  readonly amount?: WireAmount | null | undefined;
}

/** A modification is only `received`: the result comes later as a notification. */
export function modificationOutcome(answer: ModificationAnswer, asked: { readonly paymentRef: string; readonly amount?: number; readonly currency: string }): CallOutcome {
  const psp = answer.pspReference;
  if (typeof psp !== 'string' || psp === '') return { kind: 'unknown', reason: 'unparseable', providerRef: asked.paymentRef, detail: 'the modification answer has no pspReference' };
  if (answer.paymentPspReference !== undefined && answer.paymentPspReference !== asked.paymentRef) {
    return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: psp, alert: true, detail: `modification of ${answer.paymentPspReference}, not ${asked.paymentRef}` };
  }
  if (asked.amount !== undefined && answer.amount !== undefined && answer.amount !== null && (echoedMinor(answer.amount) !== asked.amount || answer.amount.currency !== asked.currency)) {
    return { kind: 'unknown', reason: 'integrity_mismatch', providerRef: psp, alert: true, detail: `asked ${asked.amount} ${asked.currency} (ISO minor units), Adyen echoed value ${answer.amount.value ?? '?'} ${answer.amount.currency ?? '?'} (Adyen's decimals)` };
  }
  if (answer.status !== 'received') return { kind: 'unknown', reason: 'unexpected', providerRef: psp, detail: `modification status ${answer.status ?? 'missing'}` };
  return { kind: 'pending', providerRef: psp, providerStatus: 'received' };
}
