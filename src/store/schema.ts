// Drizzle mirror of migrations/*.sql (the SQL is the authority; test/integration/store/schema
// checks that both name the same tables and columns). Money columns map BIGINT to a JS number
// only when it is a safe integer.

import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { AttemptAuthentication, OperationFailure, PaymentAuthentication, ReleaseOperation, RoutingDecision, VoidOperation } from '../core/payment.ts';
import { safeBigint } from './safe-bigint.ts';

/** BIGINT minor units <-> number, never a float. */
const minorUnits = customType<{ data: number; driverData: string | number }>({
  dataType: () => 'bigint',
  toDriver: (value) => {
    if (!Number.isSafeInteger(value)) throw new RangeError(`amount ${value} is not a safe integer`);
    return value;
  },
  fromDriver: (value) => safeBigint(value, 'amount'),
});

/** bytea <-> Buffer (stored responses and raw webhook bodies, byte-for-byte). */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const merchants = pgTable('merchants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  allowedOrigins: text('allowed_origins').array().notNull().default(sql`'{}'`),
  allowRawCards: boolean('allow_raw_cards').notNull().default(false),
  /** The API version the merchant is pinned to (migration 0030); null: the latest. */
  apiVersion: text('api_version'),
});

/** A merchant's API keys (migration 0022): only the SHA-256 of a key is kept. */
export const apiKeys = pgTable('api_keys', {
  id: text('id').primaryKey(),
  merchantId: text('merchant_id').notNull().references(() => merchants.id),
  kind: text('kind').notNull(),
  role: text('role'),
  mode: text('mode').notNull(),
  name: text('name').notNull(),
  hash: text('hash').notNull().unique(),
  legacy: boolean('legacy').notNull().default(false),
  createdAt: ts('created_at').notNull().defaultNow(),
  expiresAt: ts('expires_at'),
  revokedAt: ts('revoked_at'),
  replacedBy: text('replaced_by'),
}, (t) => [index('api_keys_merchant_idx').on(t.merchantId, t.createdAt)]);

export const paymentMethodQuota = pgTable('payment_method_quota', {
  merchantId: text('merchant_id').primaryKey().references(() => merchants.id),
  windowStart: ts('window_start').notNull(),
  issued: integer('issued').notNull(),
});

export const routingSnapshots = pgTable('routing_snapshots', {
  version: text('version').primaryKey(),
  content: jsonb('content').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const payments = pgTable(
  'payments',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    /** Migration 0024: live or test, fixed at creation (src/routing/select.ts paymentLivemode). */
    livemode: boolean('livemode').notNull(),
    reference: text('reference').notNull(),
    amount: minorUnits('amount').notNull(),
    currency: text('currency').notNull(),
    state: text('state').notNull(),
    captureMethod: text('capture_method').notNull(),
    allowPartial: boolean('allow_partial').notNull(),
    amountAuthorized: minorUnits('amount_authorized').notNull().default(0),
    amountCaptured: minorUnits('amount_captured').notNull().default(0),
    amountRefunded: minorUnits('amount_refunded').notNull().default(0),
    captureOpen: boolean('capture_open').notNull().default(false),
    routing: jsonb('routing').$type<RoutingDecision>().notNull(),
    routingSnapshot: text('routing_snapshot').notNull(),
    voidOp: jsonb('void_op').$type<VoidOperation>(),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    version: integer('version').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    deadlineAt: ts('deadline_at').notNull(),
    paymentMethod: jsonb('payment_method'),
    authentication: jsonb('authentication').$type<PaymentAuthentication>(),
    shopper: jsonb('shopper'),
    /** The connector the resource shows (src/core/payment-connector.ts), for the list filter; null before any attempt. */
    connector: text('connector'),
  },
  (t) => [
    unique('payments_merchant_id_id_key').on(t.merchantId, t.id),
    // The list order (created_at, id) after each filter: migrations/0023_list_filters.sql.
    index('payments_merchant_created_idx').on(t.merchantId, t.createdAt, t.id),
    index('payments_merchant_reference_created_idx').on(t.merchantId, t.reference, t.createdAt, t.id),
    index('payments_merchant_state_created_idx').on(t.merchantId, t.state, t.createdAt, t.id),
    index('payments_merchant_connector_created_idx').on(t.merchantId, t.connector, t.createdAt, t.id),
    index('payments_merchant_currency_created_idx').on(t.merchantId, t.currency, t.createdAt, t.id),
    index('payments_merchant_amount_idx').on(t.merchantId, t.amount),
    index('payments_merchant_livemode_idx').on(t.merchantId, t.livemode, t.id),
    index('payments_in_flight_idx')
      .on(t.state, t.createdAt)
      .where(sql`state NOT IN ('captured', 'voided', 'declined', 'expired', 'failed')`),
  ],
);

export const paymentAttempts = pgTable(
  'payment_attempts',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id').notNull().references(() => payments.id),
    no: integer('no').notNull(),
    connector: text('connector').notNull(),
    status: text('status').notNull(),
    providerRef: text('provider_ref'),
    authKey: text('auth_key').notNull(),
    firstSentAt: ts('first_sent_at'),
    sends: integer('sends').notNull(),
    maybeReached: boolean('maybe_reached').notNull(),
    notSentSends: integer('not_sent_sends').array().notNull().default([]),
    prepareCalls: integer('prepare_calls').notNull(),
    queries: integer('queries').notNull(),
    fenceCalls: integer('fence_calls').notNull(),
    resendBlocked: boolean('resend_blocked').notNull().default(false),
    lastOutcome: text('last_outcome'),
    proof: text('proof'),
    declineCode: text('decline_code'),
    declineClass: text('decline_class'),
    retryElsewhere: boolean('retry_elsewhere').notNull(),
    notSentReason: text('not_sent_reason'),
    amountAuthorized: minorUnits('amount_authorized').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    releaseOp: jsonb('release_op').$type<ReleaseOperation>(),
    authentication: jsonb('authentication').$type<AttemptAuthentication>(),
  },
  (t) => [
    unique('payment_attempts_payment_no_key').on(t.paymentId, t.no),
    index('payment_attempts_connector_ref_idx').on(t.connector, t.providerRef).where(sql`provider_ref IS NOT NULL`),
  ],
);

const operationColumns = {
  id: text('id').primaryKey(),
  paymentId: text('payment_id').notNull().references(() => payments.id),
  no: integer('no').notNull(),
  amount: minorUnits('amount').notNull(),
  status: text('status').notNull(),
  providerKey: text('provider_key').notNull(),
  providerRef: text('provider_ref'),
  calls: integer('calls').notNull(),
  failure: jsonb('failure').$type<OperationFailure>(),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
};

export const captures = pgTable('captures', { ...operationColumns, final: boolean('final').notNull() }, (t) => [
  unique('captures_payment_no_key').on(t.paymentId, t.no),
]);

export const refunds = pgTable('refunds', { ...operationColumns, reason: text('reason'), merchantId: text('merchant_id').notNull() }, (t) => [
  unique('refunds_payment_no_key').on(t.paymentId, t.no),
  // The payment's merchant and no other.
  foreignKey({ name: 'refunds_payment_merchant_fkey', columns: [t.merchantId, t.paymentId], foreignColumns: [payments.merchantId, payments.id] }),
  index('refunds_merchant_created_idx').on(t.merchantId, t.createdAt, t.id),
  index('refunds_merchant_status_created_idx').on(t.merchantId, t.status, t.createdAt, t.id),
  index('refunds_payment_created_idx').on(t.paymentId, t.createdAt, t.id),
]);

export const paymentTransitions = pgTable(
  'payment_transitions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    paymentId: text('payment_id').notNull().references(() => payments.id),
    fromState: text('from_state').notNull(),
    toState: text('to_state').notNull(),
    input: jsonb('input').notNull(),
    origin: text('origin').notNull(),
    attemptId: text('attempt_id'),
    rawProvider: jsonb('raw_provider'),
    outcome: text('outcome').notNull(),
    code: text('code'),
    reason: text('reason').notNull(),
    version: integer('version').notNull(),
    at: ts('at').notNull(),
  },
  (t) => [index('payment_transitions_payment_idx').on(t.paymentId, t.id)],
);

export const disputes = pgTable(
  'disputes',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id').notNull().references(() => payments.id),
    connector: text('connector').notNull(),
    providerRef: text('provider_ref').notNull(),
    amount: minorUnits('amount').notNull(),
    currency: text('currency').notNull(),
    status: text('status').notNull(),
    reason: text('reason'),
    withdrawn: minorUnits('withdrawn').notNull().default(0),
    stage: integer('stage').notNull().default(0),
    providerStatus: text('provider_status'),
    fees: minorUnits('fees').notNull().default(0),
    defenseEnded: boolean('defense_ended').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    evidenceDueBy: ts('evidence_due_by'),
    evidenceSentAt: ts('evidence_sent_at'),
    evidenceSubmittedAt: ts('evidence_submitted_at'),
    defenseReason: text('defense_reason'),
    acceptedAt: ts('accepted_at'),
  },
  (t) => [unique('disputes_connector_ref_key').on(t.connector, t.providerRef), index('disputes_merchant_created_idx').on(t.merchantId, t.createdAt.desc(), t.id.desc())],
);

/** Dispute evidence a merchant uploaded (POST /v1/files); the bytes until a provider has its own copy. */
export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    purpose: text('purpose').notNull(),
    type: text('type').notNull(),
    size: integer('size').notNull(),
    sha256: text('sha256').notNull(),
    filename: text('filename'),
    content: bytea('content').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('files_merchant_created_idx').on(t.merchantId, t.createdAt.desc(), t.id.desc())],
);

export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    paymentId: text('payment_id').references(() => payments.id),
    transitionId: bigint('transition_id', { mode: 'number' }).references(() => paymentTransitions.id),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    connector: text('connector'),
    providerKey: text('provider_key'),
    runAt: ts('run_at').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    doneAt: ts('done_at'),
    publishedAt: ts('published_at'),
    claimedUntil: ts('claimed_until'),
    claimedBy: text('claimed_by'),
  },
  (t) => [
    index('outbox_due_idx').on(t.runAt).where(sql`status = 'pending'`),
    index('outbox_publish_idx').on(t.runAt, t.id).where(sql`status = 'pending'`),
    index('outbox_payment_idx').on(t.paymentId, t.id),
    index('outbox_dead_idx').on(t.createdAt).where(sql`status = 'dead'`),
    index('outbox_delivery_pending_idx').on(sql`(payload->>'deliveryId')`).where(sql`kind = 'event_delivery' AND status = 'pending'`),
  ],
);

export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    status: text('status').notNull(),
    lockedUntil: ts('locked_until'),
    paymentId: text('payment_id'),
    responseStatus: integer('response_status'),
    responseBody: bytea('response_body'),
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.key] }), index('idempotency_records_expires_idx').on(t.expiresAt)],
);

export const inboundEvents = pgTable(
  'inbound_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    connector: text('connector').notNull(),
    providerEventId: text('provider_event_id'),
    rawBody: bytea('raw_body').notNull(),
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    verified: boolean('verified').notNull(),
    outcome: text('outcome').notNull().default('pending'),
    paymentId: text('payment_id').references(() => payments.id),
    reason: text('reason'),
    receivedAt: ts('received_at').notNull().defaultNow(),
    processedAt: ts('processed_at'),
    /** The verified event in the gateway's terms (a NormalizedEvent); null for unverified requests. */
    event: jsonb('event'),
    tries: integer('tries').notNull().default(0),
  },
  (t) => [
    unique('inbound_events_connector_event_key').on(t.connector, t.providerEventId),
    index('inbound_events_pending_idx').on(t.receivedAt).where(sql`outcome = 'pending'`),
    index('inbound_events_failed_idx').on(t.receivedAt).where(sql`outcome = 'failed'`),
  ],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    url: text('url').notNull(),
    enabledEvents: text('enabled_events').array().notNull(),
    status: text('status').notNull().default('enabled'),
    createdAt: ts('created_at').notNull().defaultNow(),
    signingVersion: integer('signing_version').notNull().default(1),
    signingRotatedAt: ts('signing_rotated_at'),
    /** Endpoints from before per-endpoint keys: the global key still signs Switchyard-Signature. */
    globalSignature: boolean('global_signature').notNull().default(false),
  },
  (t) => [unique('webhook_endpoints_merchant_id_id_key').on(t.merchantId, t.id)],
);

export const merchantEvents = pgTable(
  'merchant_events',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull().references(() => merchants.id),
    paymentId: text('payment_id'),
    type: text('type').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    sourceOutboxId: bigint('source_outbox_id', { mode: 'number' }),
  },
  (t) => [
    unique('merchant_events_merchant_id_id_key').on(t.merchantId, t.id),
    unique('merchant_events_source_outbox_key').on(t.sourceOutboxId),
    index('merchant_events_payment_idx').on(t.paymentId, t.createdAt),
    index('merchant_events_merchant_created_idx').on(t.merchantId, t.createdAt, t.id),
    index('merchant_events_merchant_type_created_idx').on(t.merchantId, t.type, t.createdAt, t.id),
  ],
);

export const eventDeliveries = pgTable(
  'event_deliveries',
  {
    id: text('id').primaryKey(),
    merchantId: text('merchant_id').notNull(),
    eventId: text('event_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [
    unique('event_deliveries_event_endpoint_key').on(t.eventId, t.endpointId),
    index('event_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
    index('event_deliveries_dead_idx').on(t.createdAt).where(sql`status = 'dead'`),
    index('event_deliveries_endpoint_due_idx').on(t.endpointId, t.nextAttemptAt).where(sql`status = 'pending'`),
  ],
);

/** A delivery in flight to its endpoint, whichever process sends it (0012): what the per-endpoint limit counts. */
export const webhookEndpointLeases = pgTable(
  'webhook_endpoint_leases',
  {
    outboxId: bigint('outbox_id', { mode: 'number' }).primaryKey(),
    endpointId: text('endpoint_id').notNull(),
    merchantId: text('merchant_id').notNull(),
    holder: text('holder').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('webhook_endpoint_leases_endpoint_idx').on(t.endpointId, t.expiresAt)],
);

export const eventDeliveryAttempts = pgTable(
  'event_delivery_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: text('delivery_id').notNull().references(() => eventDeliveries.id),
    attempt: integer('attempt').notNull(),
    kid: text('kid').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    at: ts('at').notNull(),
  },
  (t) => [
    index('event_delivery_attempts_delivery_idx').on(t.deliveryId, t.id),
    index('event_delivery_attempts_kid_idx').on(t.kid, t.at),
  ],
);

export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  privateJwk: jsonb('private_jwk').notNull(),
  publicJwk: jsonb('public_jwk').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
  retiredAt: ts('retired_at'),
});

/** The secret merchant endpoints' signing keys are derived from, when SWITCHYARD_WEBHOOK_KEY_SECRET is unset. */
export const webhookKeySecret = pgTable('webhook_key_secret', {
  id: integer('id').primaryKey(),
  secret: bytea('secret').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id').references(() => payments.id),
    kind: text('kind').notNull(),
    source: text('source').notNull().unique(),
    description: text('description'),
    /** The attempt whose money it moves (migration 0015); null on older rows and disputes. */
    attemptId: text('attempt_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('ledger_transactions_attempt_idx').on(t.attemptId).where(sql`attempt_id IS NOT NULL`)],
);

export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').notNull().references(() => ledgerTransactions.id),
    account: text('account').notNull(),
    direction: text('direction').notNull(),
    amount: minorUnits('amount').notNull(),
    currency: text('currency').notNull(),
  },
  (t) => [
    index('ledger_entries_transaction_idx').on(t.transactionId),
    index('ledger_entries_account_idx').on(t.account, t.currency),
  ],
);

export type DiscrepancyFacts = Readonly<Record<string, string | number | boolean | null>>;
export interface DiscrepancyAmounts {
  readonly provider: DiscrepancyFacts;
  readonly ours: DiscrepancyFacts;
}
export interface DiscrepancyHistoryEntry {
  /** When this state was replaced. */
  readonly at: string;
  readonly detail: string;
  readonly amounts: DiscrepancyAmounts | null;
}

export const discrepancies = pgTable(
  'discrepancies',
  {
    id: text('id').primaryKey(),
    paymentId: text('payment_id').references(() => payments.id),
    attemptId: text('attempt_id'),
    kind: text('kind').notNull(),
    detail: text('detail').notNull(),
    status: text('status').notNull().default('open'),
    resolution: text('resolution'),
    createdAt: ts('created_at').notNull().defaultNow(),
    resolvedAt: ts('resolved_at'),
    category: text('category'),
    connector: text('connector'),
    providerRef: text('provider_ref'),
    owner: text('owner').notNull().default('operations'),
    dedupeKey: text('dedupe_key'),
    /** What the last run saw: the provider's side (compared on reopening) and ours (migration 0011). */
    amounts: jsonb('amounts').$type<DiscrepancyAmounts>(),
    /** Earlier states of an open finding, oldest first: each re-run that changed its detail or amounts appends one. */
    history: jsonb('history').$type<DiscrepancyHistoryEntry[]>().notNull().default([]),
    updatedAt: ts('updated_at'),
    /** The resolved row this one reopens (the provider's side changed after it was resolved). */
    reopens: text('reopens'),
    /** The provider event a discrepancy is about, when one is attached (an event held past its bound). */
    event: jsonb('event').$type<Record<string, unknown>>(),
  },
  (t) => [
    index('discrepancies_open_idx').on(t.createdAt).where(sql`status = 'open'`),
    // One open row per key; resolved rows of the same key stay as they were.
    uniqueIndex('discrepancies_open_dedupe_key').on(t.dedupeKey).where(sql`status = 'open'`),
    index('discrepancies_dedupe_key_idx').on(t.dedupeKey, t.createdAt).where(sql`dedupe_key IS NOT NULL`),
  ],
);

export const schemaMigrations = pgTable('schema_migrations', {
  version: text('version').primaryKey(),
  checksum: text('checksum').notNull(),
  appliedAt: ts('applied_at').notNull().defaultNow(),
});

/** Reports a provider announced (migration 0014): recorded once, downloaded once, imported once. */
export const providerReports = pgTable(
  'provider_reports',
  {
    connector: text('connector').notNull(),
    fileName: text('file_name').notNull(),
    kind: text('kind').notNull(),
    sequence: integer('sequence'),
    reportDay: date('report_day', { mode: 'string' }),
    announcedAt: ts('announced_at').notNull(),
    downloadedAt: ts('downloaded_at'),
    content: text('content'),
    importedAt: ts('imported_at'),
    lastError: text('last_error'),
  },
  (t) => [primaryKey({ columns: [t.connector, t.fileName] }), index('provider_reports_pending').on(t.connector).where(sql`content IS NULL OR imported_at IS NULL`)],
);

/** The operator audit trail (migration 0018): append-only, one row per operator action (src/ops/audit.ts). */
export const operatorAudit = pgTable(
  'operator_audit',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: ts('at').notNull().defaultNow(),
    operator: text('operator').notNull(),
    action: text('action').notNull(),
    target: text('target').notNull(),
    before: jsonb('before'),
    after: jsonb('after'),
    note: text('note'),
  },
  (t) => [index('operator_audit_at_idx').on(t.at, t.id), index('operator_audit_operator_idx').on(t.operator, t.at), index('operator_audit_target_idx').on(t.target, t.at)],
);

/** Dashboard sessions, server-side (migration 0018; src/ops/operator-sessions.ts). */
export const operatorSessions = pgTable(
  'operator_sessions',
  {
    id: text('id').primaryKey(),
    operator: text('operator').notNull(),
    tokenFp: text('token_fp').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('operator_sessions_operator_idx').on(t.operator).where(sql`revoked_at IS NULL`)],
);

/** A discrepancy's resolution, its history row (migration 0018): the discrepancy's status is derived from it. */
export const discrepancyResolutions = pgTable('discrepancy_resolutions', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  discrepancyId: text('discrepancy_id').notNull().unique().references(() => discrepancies.id),
  at: ts('at').notNull().defaultNow(),
  operator: text('operator').notNull(),
  reason: text('reason'),
  note: text('note').notNull(),
  evidence: jsonb('evidence'),
});
