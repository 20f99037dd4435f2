// Renders sandbox records as Stripe API objects, with every top-level key fixtures3.json has for the
// type (stripe/openapi v2596, the version stripe@23.1.0 pins), so SDK typings and connectors see real shapes.

import type { BalanceTransactionRecord, ChargeRecord, DisputeRecord, PaymentIntentRecord, RefundRecord, StripeSandboxState } from './state.ts';

export type StripeObject = Record<string, unknown>;

const NULL_ADDRESS = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };

export function renderPaymentIntent(pi: PaymentIntentRecord, state: StripeSandboxState, expand: readonly string[] = []): StripeObject {
  const latestCharge = pi.latestCharge === null ? undefined : state.charges.get(pi.latestCharge);
  const cardOptions: Record<string, unknown> = { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' };
  if (pi.requestMulticapture) cardOptions['request_multicapture'] = 'if_available';
  return {
    id: pi.id,
    object: 'payment_intent',
    amount: pi.amount,
    amount_capturable: pi.amountCapturable,
    amount_details: { tip: {} },
    amount_received: pi.amountReceived,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: pi.canceledAt,
    cancellation_reason: pi.cancellationReason,
    capture_method: pi.captureMethod,
    client_secret: pi.clientSecret,
    confirmation_method: 'automatic',
    created: pi.created,
    currency: pi.currency,
    customer: pi.customer ?? null,
    customer_account: null,
    description: pi.description,
    excluded_payment_method_types: null,
    last_payment_error: pi.lastPaymentError,
    latest_charge: expand.some((e) => e === 'latest_charge' || e.startsWith('latest_charge.')) && latestCharge ? renderCharge(latestCharge, state, subExpand(expand, 'latest_charge')) : pi.latestCharge,
    livemode: false,
    managed_payments: null,
    metadata: { ...pi.metadata },
    next_action: pi.nextAction ?? null,
    on_behalf_of: null,
    payment_method: pi.paymentMethod,
    payment_method_configuration_details: null,
    payment_method_options: { card: cardOptions },
    payment_method_types: ['card'],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: pi.status,
    transfer_data: null,
    transfer_group: null,
  };
}

/** The expansions of a field's own fields: `latest_charge.refunds` under `latest_charge` is `refunds`. */
export function subExpand(expand: readonly string[], field: string): string[] {
  return expand.flatMap((e) => (e.startsWith(`${field}.`) ? [e.slice(field.length + 1)] : []));
}

const EMBEDDED_LIST_LIMIT = 10;

/** Refunds of a charge, newest first (Stripe's list order). */
export function chargeRefunds(charge: ChargeRecord, state: StripeSandboxState): RefundRecord[] {
  return charge.refunds.map((id) => state.refunds.get(id)).filter((r): r is RefundRecord => r !== undefined).reverse();
}

/**
 * A charge as the pinned API version renders it: since 2022-11-15 `refunds` is not included unless
 * expanded (`expand[]=refunds`); the refunds are read from GET /v1/refunds?charge=… .
 */
export function renderCharge(charge: ChargeRecord, state: StripeSandboxState, expand: readonly string[] = []): StripeObject {
  // An expanded sublist holds its first 10 items, as Stripe's do; the rest are read from the list endpoint.
  const all = expand.includes('refunds') ? chargeRefunds(charge, state) : null;
  const refunds = all === null ? {} : { refunds: renderList(`/v1/charges/${charge.id}/refunds`, all.slice(0, EMBEDDED_LIST_LIMIT).map(renderRefund), all.length > EMBEDDED_LIST_LIMIT) };
  const failed = charge.failure !== null;
  return {
    id: charge.id,
    object: 'charge',
    amount: charge.amount,
    amount_captured: charge.amountCaptured,
    amount_refunded: charge.amountRefunded,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: charge.captured ? `txn_${charge.id.slice(3)}` : null,
    billing_details: { address: NULL_ADDRESS, email: null, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: 'SWITCHYARD SANDBOX',
    captured: charge.captured,
    created: charge.created,
    currency: charge.currency,
    customer: null,
    description: null,
    disputed: charge.disputed,
    failure_balance_transaction: null,
    failure_code: charge.failure?.code ?? null,
    failure_message: charge.failure?.message ?? null,
    fraud_details: {},
    livemode: false,
    metadata: { ...charge.metadata },
    on_behalf_of: null,
    outcome: {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: failed ? 'declined_by_network' : 'approved_by_network',
      reason: failed ? (charge.failure?.declineCode ?? charge.failure?.code ?? null) : null,
      risk_level: 'normal',
      seller_message: failed ? 'The bank did not return any further details with this decline.' : 'Payment complete.',
      type: failed ? 'issuer_declined' : 'authorized',
    },
    paid: !failed,
    payment_intent: charge.paymentIntent,
    payment_method: charge.card.id,
    payment_method_details: { card: renderCardDetails(charge), type: 'card' },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: charge.amountCaptured > 0 && charge.amountRefunded >= charge.amountCaptured,
    ...refunds,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: charge.status,
    transfer_data: null,
    transfer_group: null,
  };
}

function renderCardDetails(charge: ChargeRecord): StripeObject {
  return {
    amount_authorized: charge.amountAuthorized,
    authorization_code: charge.failure === null ? '123456' : null,
    brand: charge.card.brand,
    checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: charge.card.cvcChecked === false ? null : charge.failure?.code === 'incorrect_cvc' ? 'fail' : 'pass' },
    country: 'US',
    exp_month: charge.card.expMonth ?? 12,
    exp_year: charge.card.expYear ?? 2034,
    extended_authorization: { status: 'disabled' },
    fingerprint: charge.card.fingerprint ?? `fp${charge.card.last4}${charge.card.brand}`,
    funding: 'credit',
    incremental_authorization: { status: 'unavailable' },
    installments: null,
    last4: charge.card.last4,
    mandate: null,
    multicapture: { status: charge.multicapture },
    network: charge.card.brand,
    network_token: { used: false },
    network_transaction_id: charge.failure === null ? `ntx${charge.id.slice(3, 15)}` : null,
    overcapture: { maximum_amount_capturable: charge.amountAuthorized, status: 'unavailable' },
    regulated_status: null,
    three_d_secure: null,
    transaction_link_id: null,
    wallet: null,
  };
}

export function renderRefund(refund: RefundRecord): StripeObject {
  return {
    id: refund.id,
    object: 'refund',
    amount: refund.amount,
    balance_transaction: refund.status === 'succeeded' ? `txn_${refund.id.slice(3)}` : null,
    charge: refund.charge,
    created: refund.created,
    currency: refund.currency,
    customer: null,
    customer_account: null,
    destination_details: { card: { reference_status: 'available', reference_type: 'acquirer_reference_number', type: 'refund' }, type: 'card' },
    ...(refund.failureReason !== null && { failure_reason: refund.failureReason }),
    metadata: { ...refund.metadata },
    payment_intent: refund.paymentIntent,
    payment_method: null,
    reason: refund.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: refund.status,
    transfer_reversal: null,
  };
}

const EVIDENCE_FIELDS = [
  'access_activity_log', 'billing_address', 'cancellation_policy', 'cancellation_policy_disclosure', 'cancellation_rebuttal',
  'customer_communication', 'customer_email_address', 'customer_name', 'customer_purchase_ip', 'customer_signature',
  'duplicate_charge_documentation', 'duplicate_charge_explanation', 'duplicate_charge_id', 'product_description', 'receipt',
  'refund_policy', 'refund_policy_disclosure', 'refund_refusal_explanation', 'service_date', 'service_documentation',
  'shipping_address', 'shipping_carrier', 'shipping_date', 'shipping_documentation', 'shipping_tracking_number',
  'uncategorized_file', 'uncategorized_text',
] as const;

const BT_DESCRIPTIONS: Record<BalanceTransactionRecord['type'], string> = {
  charge: 'Payment',
  refund: 'REFUND FOR CHARGE',
  refund_failure: 'REFUND FAILURE',
  adjustment: 'Chargeback withdrawal',
};

/** A balance transaction as Stripe renders it; `fee` is Stripe's charge on it (a dispute fee; < 0 returned), net = amount - fee. */
export function balanceTransactionObject(t: BalanceTransactionRecord, source: StripeObject | string): StripeObject {
  const fee = t.fee ?? 0;
  return {
    id: t.id,
    object: 'balance_transaction',
    amount: t.amount,
    available_on: t.created + 2 * 86_400,
    balance_type: 'payments',
    created: t.created,
    currency: t.currency,
    description: t.reportingCategory === 'dispute_reversal' ? 'Chargeback reversal' : BT_DESCRIPTIONS[t.type],
    exchange_rate: null,
    fee,
    fee_details: fee === 0 ? [] : [{ amount: fee, application: null, currency: t.currency, description: 'Dispute fee', type: 'stripe_fee' }],
    net: t.amount - fee,
    reporting_category: t.reportingCategory,
    source,
    status: 'pending',
    type: t.type,
  };
}

export function renderDispute(dispute: DisputeRecord, state: StripeSandboxState): StripeObject {
  const charge = state.charges.get(dispute.charge);
  // Every balance transaction the dispute made (withdrawal, reinstatement), oldest first, expanded as Stripe embeds them.
  const transactions = [...state.balanceTransactions.values()].filter((t) => t.source === dispute.id).sort((a, b) => a.created - b.created);
  return {
    id: dispute.id,
    object: 'dispute',
    amount: dispute.amount,
    balance_transactions: transactions.map((t) => balanceTransactionObject(t, dispute.id)),
    charge: dispute.charge,
    created: dispute.created,
    currency: dispute.currency,
    enhanced_eligibility_types: [],
    evidence: { ...Object.fromEntries(EVIDENCE_FIELDS.map((f) => [f, dispute.evidence?.[f] ?? null])), enhanced_evidence: {} },
    evidence_details: {
      due_by: dispute.created + 21 * 86_400, enhanced_eligibility: {}, has_evidence: Object.keys(dispute.evidence ?? {}).length > 0, past_due: false,
      submission_count: dispute.submissionCount ?? 0,
    },
    // An inquiry can still be refunded; a chargeback cannot (Stripe refuses refunds of disputed funds).
    is_charge_refundable: dispute.status.startsWith('warning_'),
    livemode: false,
    metadata: {},
    payment_intent: dispute.paymentIntent,
    payment_method_details: {
      card: { brand: charge?.card.brand ?? 'visa', case_type: 'chargeback', network: charge?.card.brand ?? 'visa', network_reason_code: '10.4' },
      type: 'card',
    },
    reason: dispute.reason,
    status: dispute.status,
  };
}

export function renderList(url: string, data: readonly StripeObject[], hasMore: boolean): StripeObject {
  return { object: 'list', data, has_more: hasMore, url };
}
