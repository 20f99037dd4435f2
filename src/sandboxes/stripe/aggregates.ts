// How the Stripe sandbox's records are stored: one document per PaymentIntent with its charges,
// refunds and disputes (they change together), plus an alias row for each child's id so a
// refund, charge or dispute can be found by its own id. A request loads the aggregates it
// touches into a StripeSandboxState, the handlers change it in memory, and changedAggregates()
// says what to write back.

import type { Changes, LoadSpec, StoredObject } from '../shared/account-store.ts';
import type { FormParams } from './form-encoding.ts';
import { StripeSandboxState } from './state.ts';
import type { BalanceTransactionRecord, ChargeRecord, CustomerRecord, DisputeRecord, FileRecord, PaymentIntentRecord, RefundRecord, SavedPaymentMethodRecord } from './state.ts';

interface PaymentIntentDocument {
  readonly pi: PaymentIntentRecord;
  readonly charges: readonly ChargeRecord[];
  readonly refunds: readonly RefundRecord[];
  readonly disputes: readonly DisputeRecord[];
  /** Absent in documents written before the sandbox booked balance transactions. */
  readonly balanceTransactions?: readonly BalanceTransactionRecord[];
}

/** A state holding the loaded aggregates, and what they looked like (to write back only changes). */
export interface LoadedState {
  readonly state: StripeSandboxState;
  readonly before: ReadonlyMap<string, string>;
  readonly createdMs: ReadonlyMap<string, number>;
}

/** Customers and saved PaymentMethods are stored as documents of their own, written once. */
type CustomerDocument = { readonly customer: CustomerRecord };
type SavedPaymentMethodDocument = { readonly savedPaymentMethod: SavedPaymentMethodRecord };
/** An uploaded file, a document of its own (files.ts), written once. */
type FileDocument = { readonly file: FileRecord };

export function stateOf(objects: readonly StoredObject[]): LoadedState {
  const state = new StripeSandboxState();
  const before = new Map<string, string>();
  const createdMs = new Map<string, number>();
  for (const object of objects) {
    if (isObjectWith(object.doc, 'customer')) {
      const c = (object.doc as CustomerDocument).customer;
      state.customers.set(c.id, c);
      before.set(c.id, 'stored');
      continue;
    }
    if (isObjectWith(object.doc, 'savedPaymentMethod')) {
      const pm = (object.doc as SavedPaymentMethodDocument).savedPaymentMethod;
      state.savedPaymentMethods.set(pm.id, pm);
      before.set(pm.id, 'stored');
      continue;
    }
    if (isObjectWith(object.doc, 'file')) {
      const f = (object.doc as FileDocument).file;
      state.files.set(f.id, f);
      before.set(f.id, 'stored');
      continue;
    }
    const doc = object.doc as PaymentIntentDocument;
    state.paymentIntents.set(doc.pi.id, doc.pi);
    for (const c of doc.charges) state.charges.set(c.id, c);
    for (const r of doc.refunds) state.refunds.set(r.id, r);
    for (const d of doc.disputes) state.disputes.set(d.id, d);
    for (const t of doc.balanceTransactions ?? []) state.balanceTransactions.set(t.id, t);
    before.set(doc.pi.id, JSON.stringify(documentOf(state, doc.pi)));
    createdMs.set(doc.pi.id, object.createdMs);
  }
  return { state, before, createdMs };
}

function isObjectWith(doc: unknown, key: string): boolean {
  return typeof doc === 'object' && doc !== null && Object.hasOwn(doc, key);
}

function documentOf(state: StripeSandboxState, pi: PaymentIntentRecord): PaymentIntentDocument {
  const mine = <T extends { paymentIntent: string }>(records: Iterable<T>): T[] => [...records].filter((r) => r.paymentIntent === pi.id);
  const balanceTransactions = mine(state.balanceTransactions.values());
  return {
    pi, charges: mine(state.charges.values()), refunds: mine(state.refunds.values()), disputes: mine(state.disputes.values()),
    ...(balanceTransactions.length > 0 && { balanceTransactions }),
  };
}

/** The aggregates that are new or changed, and the aliases of children that are new. */
export function changedAggregates(loaded: LoadedState, nowMs: number): Pick<Changes, 'objects' | 'aliases'> {
  const objects: StoredObject[] = [];
  const aliases: { alias: string; objectId: string }[] = [];
  for (const customer of loaded.state.customers.values()) {
    if (!loaded.before.has(customer.id)) objects.push({ id: customer.id, createdMs: nowMs, reference: null, doc: { customer } satisfies CustomerDocument });
  }
  for (const savedPaymentMethod of loaded.state.savedPaymentMethods.values()) {
    if (!loaded.before.has(savedPaymentMethod.id)) objects.push({ id: savedPaymentMethod.id, createdMs: nowMs, reference: null, doc: { savedPaymentMethod } satisfies SavedPaymentMethodDocument });
  }
  for (const file of loaded.state.files.values()) {
    if (!loaded.before.has(file.id)) objects.push({ id: file.id, createdMs: nowMs, reference: null, doc: { file } satisfies FileDocument });
  }
  for (const pi of loaded.state.paymentIntents.values()) {
    const doc = documentOf(loaded.state, pi);
    const json = JSON.stringify(doc);
    const was = loaded.before.get(pi.id);
    if (was === json) continue;
    objects.push({ id: pi.id, createdMs: loaded.createdMs.get(pi.id) ?? nowMs, reference: null, doc });
    const known = new Set<string>();
    if (was !== undefined) {
      const old = JSON.parse(was) as PaymentIntentDocument;
      for (const child of [...old.charges, ...old.refunds, ...old.disputes, ...(old.balanceTransactions ?? [])]) known.add(child.id);
    }
    for (const child of [...doc.charges, ...doc.refunds, ...doc.disputes, ...(doc.balanceTransactions ?? [])]) if (!known.has(child.id)) aliases.push({ alias: child.id, objectId: pi.id });
  }
  return { objects, aliases };
}

export type StripeLoadKind = 'create' | 'list' | 'payment_intent' | 'child' | 'balance' | 'events' | 'customer_create' | 'attach' | 'refunds' | 'file' | 'dispute_update';

/** What a request on this route reads: the PaymentIntent it names, or the one owning the named child. */
export function loadSpecOf(kind: StripeLoadKind, id: string, params: FormParams): LoadSpec & { all?: boolean; fromMs?: number; toMs?: number } {
  // A PaymentIntent create or confirm reads the saved PaymentMethod and Customer it names.
  const named = (...names: string[]): string[] => names.map((n) => params[n]).filter((v): v is string => typeof v === 'string' && !v.startsWith('pm_card_'));
  switch (kind) {
    case 'customer_create':
      return {};
    case 'file':
      // A create reads nothing; a retrieve reads the file's own document.
      return id === '' ? {} : { ids: [id] };
    case 'dispute_update': {
      // The dispute's PaymentIntent, and the files its evidence names (evidence[<file field>] = file_…).
      const evidence = params['evidence'];
      const files = typeof evidence === 'object' && !Array.isArray(evidence) ? Object.values(evidence).filter((v): v is string => typeof v === 'string' && v.startsWith('file_')) : [];
      return { aliases: [id], ids: files };
    }
    case 'attach':
      return { ids: [id, ...named('customer')] };
    case 'balance':
      // A balance transaction on an old PaymentIntent is newer than the PaymentIntent: every aggregate is read.
      return { all: true };
    case 'events':
      return createdRange(params);
    case 'create': {
      // POST /v1/refunds names its PaymentIntent or its charge.
      const pi = params['payment_intent'];
      const charge = params['charge'];
      return { ids: typeof pi === 'string' ? [pi] : named('payment_method', 'customer'), aliases: typeof charge === 'string' ? [charge] : [] };
    }
    case 'list':
      return { all: true, ...createdRange(params) };
    case 'refunds': {
      // GET /v1/refunds: the charge's or PaymentIntent's aggregate, else every one (a refund is newer than its PaymentIntent).
      const pi = params['payment_intent'];
      const charge = params['charge'];
      if (typeof pi !== 'string' && typeof charge !== 'string') return { all: true };
      return { ids: typeof pi === 'string' ? [pi] : [], aliases: typeof charge === 'string' ? [charge] : [] };
    }
    case 'payment_intent':
      return { ids: [id, ...named('payment_method')] };
    case 'child':
      return { aliases: [id] };
  }
}

/** A loose bound on `created` (seconds) in stored milliseconds; the handler applies the exact filter. */
function createdRange(params: FormParams): { fromMs?: number; toMs?: number } {
  const created = params['created'];
  if (created === undefined || Array.isArray(created)) return {};
  const seconds = (v: unknown): number | undefined => (typeof v === 'string' && /^\d{1,12}$/.test(v) ? Number(v) : undefined);
  if (typeof created === 'string') {
    const exact = seconds(created);
    return exact === undefined ? {} : { fromMs: exact * 1000, toMs: exact * 1000 + 999 };
  }
  const from = seconds(created['gte']) ?? seconds(created['gt']);
  const to = seconds(created['lte']) ?? seconds(created['lt']);
  return { ...(from !== undefined && { fromMs: from * 1000 }), ...(to !== undefined && { toMs: to * 1000 + 999 }) };
}
