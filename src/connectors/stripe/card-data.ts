// Raw card data on a PaymentIntent: `payment_method_data[type]=card` with the card's number,
// expiry and (while the vault still has it) code. It is a gated parameter — the account must have
// raw card data APIs enabled (support.stripe.com/questions/enabling-access-to-raw-card-data-apis);
// otherwise Stripe answers 402 invalid_request_error "Sending credit card numbers directly to the
// Stripe API is generally unsafe…" — so stripe@23.1.0's types have no `payment_method_data.card`.
// This is the one place that adds it, typed: the SDK form-encodes any nested field it is given.

import type Stripe from 'stripe';
import type { ConnectorCard } from '../contract.ts';

/** The card fields as Stripe reads them (payment_method_data[card][…]). */
export interface StripeRawCard {
  readonly number: string;
  readonly exp_month: number;
  readonly exp_year: number;
  /** Sent only when the vault still holds it: Stripe takes a card without its code. */
  readonly cvc?: string;
}

/** Stripe's PaymentMethodData (the typed part) with the card the SDK's types leave out. */
export type RawCardPaymentMethodData = Stripe.PaymentIntentCreateParams.PaymentMethodData & { readonly type: 'card'; readonly card: StripeRawCard };

/**
 * The params with the card as payment_method_data instead of a payment_method. Deterministic in
 * its input (a same-key resend with the same card is the same request, field for field): the code
 * only when not null, the holder's name only when known.
 */
export function withRawCard(params: Stripe.PaymentIntentCreateParams, card: ConnectorCard): Stripe.PaymentIntentCreateParams {
  const { payment_method: _replaced, ...rest } = params;
  const data: RawCardPaymentMethodData = {
    type: 'card',
    card: { number: card.number, exp_month: card.expMonth, exp_year: card.expYear, ...(card.cvc === null ? {} : { cvc: card.cvc }) },
    ...(card.holderName === null ? {} : { billing_details: { name: card.holderName } }),
  };
  return { ...rest, payment_method_data: data };
}
