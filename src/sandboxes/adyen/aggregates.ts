// How the Adyen sandbox's records are stored: one document per payment with its modifications,
// an alias row per modification pspReference, a row per fenced merchant reference, and the
// settlement bookings appended as rows. A request loads what it touches into an
// AdyenSandboxState; changesOf() says what to write back.

import type { Changes, LoadSpec, StoredObject } from '../shared/account-store.ts';
import type { AdyenAuthenticationSettings } from './authentication.ts';
import { pspOfRedirectResult } from './authentication.ts';
import type { JsonObject } from './context.ts';
import { isObject } from './context.ts';
import { AdyenSandboxState } from './state.ts';
import { DISPUTE_SERVICE_PREFIX } from './dispute-service.ts';
import type { PaymentRecord, SettlementBooking } from './state.ts';

export interface LoadedAdyenState {
  readonly state: AdyenSandboxState;
  readonly before: ReadonlyMap<string, string>;
  readonly fenced: ReadonlySet<string>;
}

/** The account's provider settings as stored in its row. */
export interface AdyenAccountSettings {
  readonly commission?: { fixed: number; bps: number };
  readonly batching?: { maxItems: number; windowMs: number };
  readonly authentication?: AdyenAuthenticationSettings;
  /** What a technical cancel does to an authorization already in flight for its reference (configureTechnicalCancel). Default: cancelled. */
  readonly inFlightAfterCancel?: InFlightAfterCancel;
  /** Multiple partial captures are enabled (a capture leaves the rest authorized until a cancel). Default: off. */
  readonly multicapture?: boolean;
  /** Raw card data allowed for the API credential (configureRawCardData). Default: allowed. */
  readonly rawCardData?: boolean;
}

/**
 * Adyen acknowledges a technical cancel of a reference it has not seen (TECHNICAL_CANCEL success,
 * no payment named). Whether an authorization already in flight for that reference is then stopped
 * is not documented: `cancelled` (the default) answers it Cancelled, as any later /payments with the
 * reference; `authorised` completes it as it would have (Authorised, its AUTHORISATION notification),
 * and only /payments that arrive after the cancel are Cancelled (issue 41 §5).
 */
export type InFlightAfterCancel = 'cancelled' | 'authorised';

export function adyenStateOf(objects: readonly StoredObject[], fences: readonly string[], settings: AdyenAccountSettings): LoadedAdyenState {
  const state = new AdyenSandboxState();
  const before = new Map<string, string>();
  for (const object of objects) {
    const p = object.doc as PaymentRecord;
    state.payments.set(p.pspReference, p);
    before.set(p.pspReference, JSON.stringify(p));
  }
  // Only membership is read from the fences; the fencing pspReference stays in the database.
  for (const reference of fences) state.fencedReferences.set(reference, '');
  if (settings.commission !== undefined) state.commission = settings.commission;
  return { state, before, fenced: new Set(fences) };
}

/** What a settlement row needs of its payment (stored with the row; the payment may change later). */
function bookingDoc(b: SettlementBooking): unknown {
  const p = b.payment;
  return { ...b, payment: { pspReference: p.pspReference, merchantReference: p.merchantReference, merchantAccount: p.merchantAccount, paymentMethod: p.paymentMethod, amount: p.amount } };
}

export function changesOf(loaded: LoadedAdyenState): Pick<Changes, 'objects' | 'aliases' | 'fences' | 'bookings'> {
  const objects: StoredObject[] = [];
  const aliases: { alias: string; objectId: string }[] = [];
  for (const p of loaded.state.payments.values()) {
    const json = JSON.stringify(p);
    const was = loaded.before.get(p.pspReference);
    if (was === json) continue;
    objects.push({ id: p.pspReference, createdMs: p.createdMs, reference: p.merchantReference, doc: p });
    const old = was === undefined ? undefined : (JSON.parse(was) as PaymentRecord);
    const known = new Set([...(old?.modifications ?? []), ...(old?.disputes ?? [])].map((m) => m.pspReference));
    // Modifications and disputes are found by their own pspReference (a dispute's: the Disputes API).
    for (const m of [...p.modifications, ...(p.disputes ?? [])]) if (!known.has(m.pspReference)) aliases.push({ alias: m.pspReference, objectId: p.pspReference });
  }
  const fences = [...loaded.state.fencedReferences].filter(([reference]) => !loaded.fenced.has(reference)).map(([reference, psp]) => ({ reference, psp }));
  const bookings = loaded.state.bookings.map((b) => ({ bookedMs: b.bookedMs, doc: bookingDoc(b) }));
  return { objects, aliases, fences, bookings };
}

/** What a Checkout request reads and which merchant reference it must hold (a payment and a technical cancel of one reference exclude each other). */
export function loadOf(path: string, body: JsonObject): { spec: LoadSpec; locks: string[] } {
  const text = (field: string): string | null => (typeof body[field] === 'string' ? body[field] : null);
  if (path === '/v72/payments') {
    const reference = text('reference');
    return reference === null ? { spec: {}, locks: [] } : { spec: { fences: [reference] }, locks: [`ref:${reference}`] };
  }
  if (path === '/v72/cancels') {
    const reference = text('paymentReference');
    return reference === null ? { spec: {}, locks: [] } : { spec: { references: [reference], fences: [reference] }, locks: [`ref:${reference}`] };
  }
  if (path === '/v72/payments/details') {
    const details = isObject(body['details']) ? body['details'] : {};
    const psp = pspOfRedirectResult(details['redirectResult']);
    return { spec: psp === null ? {} : { ids: [psp] }, locks: [] };
  }
  if (path.startsWith(DISPUTE_SERVICE_PREFIX)) {
    // The Disputes API names the dispute: its payment is loaded by the dispute's alias, one request per dispute at a time.
    const dispute = text('disputePspReference');
    return dispute === null ? { spec: {}, locks: [] } : { spec: { aliases: [dispute] }, locks: [`dispute:${dispute}`] };
  }
  const psp = /^\/v72\/payments\/([^/]+)\//.exec(path)?.[1];
  return { spec: psp === undefined ? {} : { ids: [decodeURIComponent(psp)] }, locks: [] };
}

/** How long a notification waits for company in a batch (0: sent alone). */
export function batchingDelayMs(settings: AdyenAccountSettings): number {
  return (settings.batching?.maxItems ?? 1) > 1 ? (settings.batching?.windowMs ?? 0) : 0;
}
