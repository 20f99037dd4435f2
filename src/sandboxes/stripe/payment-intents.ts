// PaymentIntent operations: create (optionally confirming), confirm, capture (full, partial,
// multicapture), cancel, retrieve and list, with Stripe's state rules and decline behaviour.

import { invalidParam, resourceMissing, StripeRequestFailure, stateError } from './errors.ts';
import type { StripeErrorBody } from './errors.ts';
import type { OperationContext } from './context.ts';
import type { FormParams } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import { renderCharge, renderList, renderPaymentIntent } from './objects.ts';
import type { StripeObject } from './objects.ts';
import { bookBalanceTransaction } from './balance.ts';
import { assertAtMostMaximum, assertWholeUnits } from './currencies.ts';
import {
  assertKnownParams, createdFilter, readAmount, readBoolean, readCardOption, readCurrency, readEnum, readExpand, readInteger, readMetadata, readString, required,
} from './params.ts';
import type { CaptureMethod, ChargeRecord, PaymentIntentRecord, PaymentIntentStatus } from './state.ts';
import { assertSavedCardOwner, findPaymentMethod } from './customers.ts';
import type { ChosenPaymentMethod } from './customers.ts';
import { hasPaymentMethodData, paymentMethodFromCardData } from './raw-card.ts';
import { storedCard, testPaymentMethod } from './test-payment-methods.ts';
import type { SandboxCard, TestCardBehaviour } from './test-payment-methods.ts';

const CONFIRM_PARAMS = ['payment_method', 'payment_method_data', 'payment_method_options', 'return_url', 'off_session', 'error_on_requires_action', 'expand', 'capture_method', 'receipt_email', 'setup_future_usage', 'mandate_data', 'use_stripe_sdk'];
const CREATE_PARAMS = new Set([
  ...CONFIRM_PARAMS, 'amount', 'currency', 'confirm', 'metadata', 'description', 'customer', 'statement_descriptor', 'statement_descriptor_suffix',
  'automatic_payment_methods', 'allowed_payment_method_types', 'excluded_payment_method_types', 'payment_method_types', 'confirmation_method', 'transfer_group',
]);
const CAPTURE_PARAMS = new Set(['amount_to_capture', 'final_capture', 'metadata', 'expand', 'statement_descriptor', 'statement_descriptor_suffix']);
const CANCEL_PARAMS = new Set(['cancellation_reason', 'expand']);
const CAPTURE_METHODS: readonly CaptureMethod[] = ['automatic', 'automatic_async', 'manual'];
const CANCELLABLE: readonly PaymentIntentStatus[] = ['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture', 'processing'];
const MAX_MULTICAPTURES = 50;

export function createPaymentIntent(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, CREATE_PARAMS);
  const amount = required(readAmount(params, 'amount'), 'amount');
  const currency = required(readCurrency(params, 'currency'), 'currency');
  assertWholeUnits(amount, currency, 'amount');
  assertAtMostMaximum(amount, currency, 'amount');
  const confirm = readBoolean(params, 'confirm') ?? false;
  const customer = readString(params, 'customer') ?? null;
  if (customer !== null && !ctx.state.customers.has(customer)) throw resourceMissing('customer', customer, 'customer');
  const paymentMethod = readPaymentMethod(ctx, params);
  if (paymentMethod !== undefined) assertSavedCardOwner(paymentMethod, customer);
  if (confirm && paymentMethod === undefined) throw invalidParam('payment_method', 'You must provide a payment_method when confirm=true.', 'parameter_missing');
  const id = stripeId('pi');
  const pi: PaymentIntentRecord = {
    id,
    created: ctx.now,
    // Live's shape (pi_<id>_secret_<25 base62>): what the gateway must never store or serve.
    clientSecret: `${id}_secret_${stripeId('s', 25).slice(2)}`,
    amount,
    currency,
    captureMethod: readEnum(params, 'capture_method', CAPTURE_METHODS) ?? 'automatic',
    status: paymentMethod === undefined ? 'requires_payment_method' : 'requires_confirmation',
    paymentMethod: paymentMethod?.id ?? null,
    card: paymentMethod?.card.id ?? null,
    ...(paymentMethod?.raw === true && { rawCard: paymentMethod.card }),
    customer,
    metadata: readMetadata(params, 'metadata'),
    description: readString(params, 'description') ?? null,
    amountCapturable: 0,
    amountReceived: 0,
    latestCharge: null,
    lastPaymentError: null,
    canceledAt: null,
    cancellationReason: null,
    requestMulticapture: readCardOption(params, 'request_multicapture') === 'if_available',
  };
  ctx.state.paymentIntents.set(id, pi);
  ctx.emit('payment_intent.created', renderPaymentIntent(pi, ctx.state));
  // confirm=true: the create is the confirm (one request, one idempotency key, one stored answer).
  if (confirm && paymentMethod !== undefined) authorize(ctx, pi, paymentMethod, confirmOptions(params));
  return renderPaymentIntent(pi, ctx.state, readExpand(params));
}

interface ConfirmOptions {
  readonly errorOnRequiresAction: boolean;
  readonly returnUrl: string | undefined;
  /** payment_method_options[card][request_three_d_secure]=any|challenge: authenticate whatever the card says. */
  readonly forceAuthentication: boolean;
}

function confirmOptions(params: FormParams): ConfirmOptions {
  const threeDs = readCardOption(params, 'request_three_d_secure');
  if (threeDs !== undefined && !['automatic', 'any', 'challenge'].includes(threeDs)) {
    throw invalidParam('payment_method_options[card][request_three_d_secure]', `Invalid request_three_d_secure: must be one of automatic, any, or challenge`);
  }
  const returnUrl = readString(params, 'return_url');
  const errorOnRequiresAction = readBoolean(params, 'error_on_requires_action') ?? false;
  if (returnUrl !== undefined && errorOnRequiresAction) {
    throw invalidParam('return_url', 'You cannot provide a return_url when error_on_requires_action is true.');
  }
  return { errorOnRequiresAction, returnUrl, forceAuthentication: threeDs === 'any' || threeDs === 'challenge' };
}

export function confirmPaymentIntent(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, new Set(CONFIRM_PARAMS));
  const pi = findPaymentIntent(ctx, id);
  const given = readPaymentMethod(ctx, params);
  if (given !== undefined) assertSavedCardOwner(given, pi.customer ?? null);
  if (pi.status !== 'requires_payment_method' && pi.status !== 'requires_confirmation') {
    throw unexpectedState(ctx, pi, 'confirm', ['requires_payment_method', 'requires_confirmation']);
  }
  const paymentMethod = given ?? heldPaymentMethod(pi);
  if (paymentMethod === undefined) throw invalidParam('payment_method', 'You cannot confirm this PaymentIntent because it is missing a payment method.', 'payment_intent_unexpected_state');
  const captureMethod = readEnum(params, 'capture_method', CAPTURE_METHODS);
  if (captureMethod !== undefined) pi.captureMethod = captureMethod;
  if (readCardOption(params, 'request_multicapture') === 'if_available') pi.requestMulticapture = true;
  authorize(ctx, pi, paymentMethod, confirmOptions(params));
  return renderPaymentIntent(pi, ctx.state, readExpand(params));
}

/**
 * Asks the (simulated) issuer; a decline leaves the PI requires_payment_method and answers 402. A
 * card that needs customer authentication leaves it requires_action, or, with
 * error_on_requires_action, fails it like a decline (`authentication_required`) before any charge.
 */
function authorize(ctx: OperationContext, pi: PaymentIntentRecord, chosen: ChosenPaymentMethod, opts: ConfirmOptions): void {
  const pm = chosen.card;
  pi.paymentMethod = chosen.id;
  pi.card = pm.id;
  if (chosen.raw === true) pi.rawCard = pm;
  if (pm.behaviour.kind === 'authenticate' || opts.forceAuthentication) return requireAction(ctx, pi, opts);
  charge(ctx, pi, pm, pm.behaviour);
}

/** The issuer's answer (after any authentication): a charge, approved, partial or declined (402). */
function charge(ctx: OperationContext, pi: PaymentIntentRecord, pm: SandboxCard, answer: TestCardBehaviour): void {
  const behaviour = answer.kind === 'authenticate' ? (answer.then ?? { kind: 'approve' as const }) : answer;
  let authorized = pi.amount;
  let failure: ChargeRecord['failure'] = null;
  if (behaviour.kind === 'decline') failure = { code: behaviour.code, declineCode: behaviour.declineCode, message: behaviour.message };
  if (behaviour.kind === 'partial') authorized = Math.floor((pi.amount * behaviour.fraction.numerator) / behaviour.fraction.denominator);
  const automatic = pi.captureMethod !== 'manual';
  const charge: ChargeRecord = {
    id: stripeId('ch'),
    created: ctx.now,
    paymentIntent: pi.id,
    amount: pi.amount,
    currency: pi.currency,
    // A saved card keeps its own id on the charge; its card is the test card's, without its number.
    card: storedCard(pm, pi.paymentMethod ?? pm.id),
    status: failure === null ? 'succeeded' : 'failed',
    failure,
    metadata: { ...pi.metadata },
    amountAuthorized: failure === null ? authorized : 0,
    multicapture: pi.requestMulticapture && !automatic ? 'available' : 'unavailable',
    amountCaptured: failure === null && automatic ? authorized : 0,
    amountRefunded: 0,
    captured: failure === null && automatic,
    captureCount: failure === null && automatic ? 1 : 0,
    disputed: false,
    refunds: [],
  };
  ctx.state.charges.set(charge.id, charge);
  pi.latestCharge = charge.id;
  if (failure !== null) {
    const error: StripeErrorBody = {
      type: 'card_error',
      code: failure.code,
      ...(failure.declineCode !== null && { decline_code: failure.declineCode }),
      message: failure.message,
      charge: charge.id,
      doc_url: `https://stripe.com/docs/error-codes/${failure.code.replaceAll('_', '-')}`,
    };
    pi.status = 'requires_payment_method';
    pi.paymentMethod = null;
    pi.lastPaymentError = error;
    ctx.emit('charge.failed', renderCharge(charge, ctx.state));
    ctx.emit('payment_intent.payment_failed', renderPaymentIntent(pi, ctx.state));
    throw new StripeRequestFailure(402, { ...error, payment_intent: renderPaymentIntent(pi, ctx.state) }, true);
  }
  pi.lastPaymentError = null;
  if (automatic) bookBalanceTransaction(ctx, { id: `txn_${charge.id.slice(3)}`, paymentIntent: pi.id, source: charge.id, type: 'charge', reportingCategory: 'charge', amount: authorized, currency: charge.currency });
  ctx.emit('charge.succeeded', renderCharge(charge, ctx.state));
  if (automatic) {
    pi.status = 'succeeded';
    pi.amountReceived = authorized;
    ctx.emit('payment_intent.succeeded', renderPaymentIntent(pi, ctx.state));
  } else {
    pi.status = 'requires_capture';
    pi.amountCapturable = authorized;
    ctx.emit('payment_intent.amount_capturable_updated', renderPaymentIntent(pi, ctx.state));
  }
}

function requireAction(ctx: OperationContext, pi: PaymentIntentRecord, opts: ConfirmOptions): void {
  if (!opts.errorOnRequiresAction) {
    pi.status = 'requires_action';
    if (opts.returnUrl !== undefined && ctx.publicUrl !== undefined) {
      // Stripe's hosted page (hooks.stripe.com in live). The page checks its own token; the URL also
      // carries payment_intent and payment_intent_client_secret as live's does, so the gateway sees
      // the secret where production puts it.
      const token = stripeId('src').slice(4);
      pi.authenticationToken = token;
      const page = new URL(`${ctx.publicUrl}/3ds/authenticate/${pi.id}`);
      page.search = new URLSearchParams({ token, payment_intent: pi.id, payment_intent_client_secret: pi.clientSecret }).toString();
      pi.nextAction = { type: 'redirect_to_url', redirect_to_url: { url: page.toString(), return_url: opts.returnUrl } };
      pi.authentication = { askedAt: pi.authentication?.askedAt ?? ctx.now, completedAt: null, outcome: null };
    } else {
      pi.nextAction = { type: 'use_stripe_sdk' };
    }
    ctx.emit('payment_intent.requires_action', renderPaymentIntent(pi, ctx.state));
    return;
  }
  const error: StripeErrorBody = {
    type: 'card_error',
    code: 'authentication_required',
    decline_code: 'authentication_required',
    message: 'Your card was declined. This transaction requires authentication.',
    doc_url: 'https://stripe.com/docs/error-codes/authentication-required',
  };
  pi.status = 'requires_payment_method';
  pi.paymentMethod = null;
  pi.lastPaymentError = error;
  ctx.emit('payment_intent.payment_failed', renderPaymentIntent(pi, ctx.state));
  throw new StripeRequestFailure(402, { ...error, payment_intent: renderPaymentIntent(pi, ctx.state) }, true);
}

export function capturePaymentIntent(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, CAPTURE_PARAMS);
  const pi = findPaymentIntent(ctx, id);
  const requested = readAmount(params, 'amount_to_capture');
  assertWholeUnits(requested, pi.currency, 'amount_to_capture');
  const final = readBoolean(params, 'final_capture') ?? true;
  const metadata = readMetadata(params, 'metadata', pi.metadata);
  if (pi.status !== 'requires_capture') throw unexpectedState(ctx, pi, 'capture', ['requires_capture']);
  const charge = ctx.state.charges.get(pi.latestCharge ?? '');
  if (charge === undefined) throw unexpectedState(ctx, pi, 'capture', ['requires_capture']);
  const amount = requested ?? pi.amountCapturable;
  if (amount > pi.amountCapturable) {
    throw stateError('amount_too_large', `The amount to capture (${amount}) is greater than the amount capturable (${pi.amountCapturable}).`, { param: 'amount_to_capture' });
  }
  if (!final && charge.multicapture !== 'available') {
    throw stateError('capture_unauthorized_payment', 'final_capture=false is only allowed when multicapture is available on the charge.', { param: 'final_capture' });
  }
  if (charge.captureCount >= MAX_MULTICAPTURES) throw stateError('charge_exceeds_transaction_limit', `A charge can be captured at most ${MAX_MULTICAPTURES} times.`);
  pi.metadata = metadata;
  charge.amountCaptured += amount;
  charge.captured = true;
  charge.captureCount += 1;
  pi.amountReceived += amount;
  bookBalanceTransaction(ctx, {
    ...(charge.captureCount === 1 && { id: `txn_${charge.id.slice(3)}` }), paymentIntent: pi.id, source: charge.id, type: 'charge', reportingCategory: 'charge', amount, currency: charge.currency,
  });
  // A final capture releases whatever was not captured.
  pi.amountCapturable = final ? 0 : pi.amountCapturable - amount;
  if (pi.amountCapturable === 0) pi.status = 'succeeded';
  ctx.emit('charge.captured', renderCharge(charge, ctx.state));
  ctx.emit(pi.status === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.amount_capturable_updated', renderPaymentIntent(pi, ctx.state));
  return renderPaymentIntent(pi, ctx.state, readExpand(params));
}

export function cancelPaymentIntent(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, CANCEL_PARAMS);
  const pi = findPaymentIntent(ctx, id);
  const reason = readEnum(params, 'cancellation_reason', ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const);
  if (!CANCELLABLE.includes(pi.status)) throw unexpectedState(ctx, pi, 'cancel', CANCELLABLE);
  // Fault release_fail_later: a Stripe cancel is synchronous, so the failure is its refusal.
  if (ctx.failModification === true) throw unexpectedState(ctx, pi, 'cancel (refused by a sandbox fault)', CANCELLABLE);
  pi.status = 'canceled';
  pi.canceledAt = ctx.now;
  pi.cancellationReason = reason ?? null;
  pi.amountCapturable = 0;
  pi.nextAction = null;
  pi.authenticationToken = null;
  ctx.emit('payment_intent.canceled', renderPaymentIntent(pi, ctx.state));
  return renderPaymentIntent(pi, ctx.state, readExpand(params));
}

/**
 * The customer's choice on the hosted authentication page. Completed: the issuer answers (a charge,
 * or its decline); failed: back to requires_payment_method with payment_intent_authentication_failure,
 * as Stripe does. Returns where Stripe sends the browser: the return_url with payment_intent,
 * payment_intent_client_secret and redirect_status. A stale page (the PI moved on, a wrong token): null.
 */
export function completeAuthentication(ctx: OperationContext, id: string, token: string, completed: boolean): string | null {
  const pi = ctx.state.paymentIntents.get(id);
  const next = pi?.nextAction;
  if (pi === undefined || pi.status !== 'requires_action' || next?.type !== 'redirect_to_url' || pi.authenticationToken !== token) return null;
  const returnUrl = next.redirect_to_url.return_url;
  pi.authentication = { askedAt: pi.authentication?.askedAt ?? ctx.now, completedAt: ctx.now, outcome: completed ? 'completed' : 'failed' };
  pi.nextAction = null;
  pi.authenticationToken = null;
  const pm = heldPaymentMethod(pi)?.card;
  let succeeded = completed && pm !== undefined;
  if (succeeded) {
    try {
      charge(ctx, pi, pm!, pm!.behaviour);
    } catch (err) {
      if (!(err instanceof StripeRequestFailure)) throw err;
      succeeded = false; // declined after authentication: the PI is requires_payment_method with the decline
    }
  } else {
    const error: StripeErrorBody = {
      type: 'invalid_request_error',
      code: 'payment_intent_authentication_failure',
      message: 'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
      doc_url: 'https://stripe.com/docs/error-codes/payment-intent-authentication-failure',
    };
    pi.status = 'requires_payment_method';
    pi.paymentMethod = null;
    pi.lastPaymentError = error;
    ctx.emit('payment_intent.payment_failed', renderPaymentIntent(pi, ctx.state));
  }
  const url = new URL(returnUrl);
  url.searchParams.set('payment_intent', pi.id);
  url.searchParams.set('payment_intent_client_secret', pi.clientSecret);
  url.searchParams.set('redirect_status', succeeded ? 'succeeded' : 'failed');
  return url.toString();
}

export function retrievePaymentIntent(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  return renderPaymentIntent(findPaymentIntent(ctx, id), ctx.state, readExpand(params));
}

/** Newest first, like Stripe; `created` filters on the sandbox clock. */
export function listPaymentIntents(ctx: OperationContext, params: FormParams): StripeObject {
  const limit = readInteger(params, 'limit', 1, 100) ?? 10;
  const startingAfter = readString(params, 'starting_after');
  const matches = createdFilter(params);
  let all = [...ctx.state.paymentIntents.values()].reverse().sort((a, b) => b.created - a.created).filter((pi) => matches(pi.created));
  if (startingAfter !== undefined) {
    const index = all.findIndex((pi) => pi.id === startingAfter);
    if (index < 0) throw resourceMissing('payment_intent', startingAfter, 'starting_after');
    all = all.slice(index + 1);
  }
  // A list expands its items' fields as `data.<field>`.
  const expand = readExpand(params).flatMap((e) => (e.startsWith('data.') ? [e.slice(5)] : []));
  const page = all.slice(0, limit).map((pi) => renderPaymentIntent(pi, ctx.state, expand));
  return renderList('/v1/payment_intents', page, all.length > limit);
}


export function findPaymentIntent(ctx: OperationContext, id: string): PaymentIntentRecord {
  const pi = ctx.state.paymentIntents.get(id);
  if (pi === undefined) throw resourceMissing('payment_intent', id);
  return pi;
}

/** The PaymentMethod a create or confirm names (payment_method), or makes from raw card data (payment_method_data). */
function readPaymentMethod(ctx: OperationContext, params: FormParams): ChosenPaymentMethod | undefined {
  const id = readString(params, 'payment_method');
  if (hasPaymentMethodData(params)) {
    if (id !== undefined) throw invalidParam('payment_method_data', 'You may only specify one of these parameters: payment_method, payment_method_data.');
    const card = paymentMethodFromCardData(params, {
      now: ctx.now, enabled: ctx.rawCardData === true,
      fingerprint: ctx.cardFingerprint ?? ((): never => { throw new Error('the sandbox has no card fingerprint key'); }),
    });
    return { id: card.id, card, customer: null, raw: true };
  }
  if (id === undefined) return undefined;
  const pm = findPaymentMethod(ctx, id);
  if (pm === undefined) throw resourceMissing('PaymentMethod', id, 'payment_method');
  return pm;
}

/** The PaymentMethod a PaymentIntent already holds, with the card it charges. */
function heldPaymentMethod(pi: PaymentIntentRecord): ChosenPaymentMethod | undefined {
  if (pi.paymentMethod === null) return undefined;
  const raw = pi.rawCard;
  if (raw !== undefined && raw !== null && raw.id === (pi.card ?? pi.paymentMethod)) return { id: pi.paymentMethod, card: raw, customer: null };
  const card = testPaymentMethod(pi.card ?? pi.paymentMethod);
  return card === undefined ? undefined : { id: pi.paymentMethod, card, customer: pi.customer ?? null };
}

function unexpectedState(ctx: OperationContext, pi: PaymentIntentRecord, action: string, allowed: readonly string[]): StripeRequestFailure {
  return stateError(
    'payment_intent_unexpected_state',
    `This PaymentIntent's ${action} could not be performed because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be used: ${allowed.join(', ')}.`,
    { payment_intent: renderPaymentIntent(pi, ctx.state) },
  );
}
