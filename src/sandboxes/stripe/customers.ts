// Customers and saved cards, as much as a saved-card payment needs: POST /v1/customers, and
// POST /v1/payment_methods/:id/attach, which (as live does for a test PaymentMethod such as
// pm_card_visa) makes a new PaymentMethod holding that card, attached to the Customer. A
// PaymentIntent then charges it only with that Customer (assertSavedCardOwner). No events are sent
// for these (customer.created, payment_method.attached): the gateway uses none of them.

import { invalidParam, resourceMissing } from './errors.ts';
import type { OperationContext } from './context.ts';
import type { FormParams } from './form-encoding.ts';
import { stripeId } from './ids.ts';
import type { StripeObject } from './objects.ts';
import { assertKnownParams, readMetadata, readString, required } from './params.ts';
import type { CustomerRecord, SavedPaymentMethodRecord } from './state.ts';
import { testPaymentMethod } from './test-payment-methods.ts';
import type { SandboxCard } from './test-payment-methods.ts';

const CUSTOMER_PARAMS = new Set(['email', 'name', 'description', 'metadata', 'expand']);
const ATTACH_PARAMS = new Set(['customer', 'expand']);

export function createCustomer(ctx: OperationContext, params: FormParams): StripeObject {
  assertKnownParams(params, CUSTOMER_PARAMS);
  const customer: CustomerRecord = { id: stripeId('cus'), created: ctx.now, email: readString(params, 'email') ?? null, metadata: readMetadata(params, 'metadata') };
  ctx.state.customers.set(customer.id, customer);
  return renderCustomer(customer);
}

export function attachPaymentMethod(ctx: OperationContext, id: string, params: FormParams): StripeObject {
  assertKnownParams(params, ATTACH_PARAMS);
  const customerId = required(readString(params, 'customer'), 'customer');
  if (!ctx.state.customers.has(customerId)) throw resourceMissing('customer', customerId, 'customer');
  const saved = ctx.state.savedPaymentMethods.get(id);
  if (saved !== undefined) {
    if (saved.customer === customerId) return renderSavedPaymentMethod(saved);
    throw invalidParam('payment_method', 'The payment method you provided has already been attached to a customer.', 'payment_method_unexpected_state');
  }
  const card = testPaymentMethod(id);
  if (card === undefined) throw resourceMissing('PaymentMethod', id);
  const attached: SavedPaymentMethodRecord = { id: stripeId('pm'), created: ctx.now, customer: customerId, card: card.id };
  ctx.state.savedPaymentMethods.set(attached.id, attached);
  return renderSavedPaymentMethod(attached);
}

/** A PaymentMethod a PaymentIntent names: a test one, or a saved one with its Customer. */
export interface ChosenPaymentMethod {
  readonly id: string;
  readonly card: SandboxCard;
  /** The Customer a saved PaymentMethod is attached to; null for a test PaymentMethod. */
  readonly customer: string | null;
  /** Made from raw card data by this request (payment_method_data): the PaymentIntent keeps its card. */
  readonly raw?: true;
}

export function findPaymentMethod(ctx: OperationContext, id: string): ChosenPaymentMethod | undefined {
  const test = testPaymentMethod(id);
  if (test !== undefined) return { id, card: test, customer: null };
  const saved = ctx.state.savedPaymentMethods.get(id);
  const card = saved === undefined ? undefined : testPaymentMethod(saved.card);
  return saved === undefined || card === undefined ? undefined : { id, card, customer: saved.customer };
}

/**
 * Live's rule for a saved card: it is charged only with the Customer it is attached to. Without
 * `customer`, or with another Customer, the PaymentIntent is refused (400) before anything happens.
 */
export function assertSavedCardOwner(pm: ChosenPaymentMethod, customer: string | null): void {
  if (pm.customer === null) return;
  if (customer === null) {
    throw invalidParam('customer', `The PaymentMethod ${pm.id} belongs to a Customer. Please include the Customer in the \`customer\` parameter on the PaymentIntent.`, 'parameter_missing');
  }
  if (customer !== pm.customer) {
    throw invalidParam('payment_method', `The customer does not have a payment method with the ID ${pm.id}. The payment method must be attached to the customer.`, 'resource_missing');
  }
}

function renderCustomer(c: CustomerRecord): StripeObject {
  return { id: c.id, object: 'customer', created: c.created, email: c.email, livemode: false, metadata: c.metadata, invoice_settings: { default_payment_method: null } };
}

function renderSavedPaymentMethod(pm: SavedPaymentMethodRecord): StripeObject {
  const card = testPaymentMethod(pm.card);
  return {
    id: pm.id, object: 'payment_method', type: 'card', created: pm.created, customer: pm.customer, livemode: false, metadata: {},
    card: { brand: card?.brand ?? 'visa', last4: card?.last4 ?? '0000', exp_month: 12, exp_year: 2034, funding: 'credit', country: 'US' },
  };
}
