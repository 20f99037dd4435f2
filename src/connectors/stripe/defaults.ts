// What the Stripe connector declares about itself, as data: capabilities, policy and the default
// decline table. The account config may override decline rows and shorten key retention.

import type { ConnectorCapabilities, ConnectorPolicy } from '../../core/policy.ts';
import type { DeclineTable } from '../contract.ts';
import { CANCELED_DECLINE_CODE } from './status-map.ts';

export const STRIPE_CAPABILITIES: ConnectorCapabilities = Object.freeze({
  manualCapture: true,
  partialCapture: true,
  // Requested on every manual PaymentIntent (request_multicapture=if_available); a non-final capture
  // is sent only when the charge reports multicapture available.
  multicapture: true,
  partialRefund: true,
  queryByReference: true,
  // Before its PaymentIntent id is known, an authorization is found by listing (lookup.ts).
  queryByMerchantReference: true,
  // No cancel by reference: an attempt whose PaymentIntent cannot be found cannot be fenced.
  cancelByMerchantReference: false,
  // One call since issue 26 (create with confirm: true); prepare stays for attempts persisted before.
  preparesAuthorization: false,
  asyncModifications: false,
  // After a failed (or declined) authentication the PaymentIntent is requires_payment_method: cancel it first.
  declineAfterAuthenticationLeavesOpen: true,
  // The PaymentIntent and its charge's refunds say what a capture, cancel or refund did (operation-lookup.ts).
  looksUpOperations: true,
  // A vaulted card goes as payment_method_data[card] (card-data.ts): the account must have raw card data APIs enabled.
  acceptsCardData: true,
  // Stripe takes a card without its code (cvc is optional in payment_method_data[card]).
  requiresCardCode: false,
});

const HOUR = 60 * 60 * 1000;

export const STRIPE_POLICY: ConnectorPolicy = Object.freeze({
  maxKeyLength: 255,
  // Stripe may prune a key once it is 24 hours old; a replay after that runs the request again.
  keyRetentionMs: 24 * HOUR,
  // Uncaptured PaymentIntents are cancelled after 7 days by default (card CIT window).
  authHoldMs: 7 * 24 * HOUR,
  capabilities: STRIPE_CAPABILITIES,
});

const HARD = Object.freeze({ class: 'hard', retryElsewhere: false } as const);
const SOFT = Object.freeze({ class: 'soft', retryElsewhere: false } as const);
const SOFT_ELSEWHERE = Object.freeze({ class: 'soft', retryElsewhere: true } as const);

/**
 * Stripe publishes no hard/soft split; this is the convention in research/providers.md A3.
 * Hard: the card itself is bad, another provider would hear the same. Soft + elsewhere: the
 * failure is on the processing path, so another acquirer may succeed.
 */
export const STRIPE_DEFAULT_DECLINES: DeclineTable = Object.freeze({
  stolen_card: HARD,
  lost_card: HARD,
  pickup_card: HARD,
  fraudulent: HARD,
  expired_card: HARD,
  incorrect_number: HARD,
  incorrect_cvc: HARD,
  invalid_account: HARD,
  restricted_card: HARD,
  security_violation: HARD,
  transaction_not_allowed: HARD,
  do_not_try_again: HARD,
  insufficient_funds: SOFT,
  generic_decline: SOFT,
  do_not_honor: SOFT,
  card_velocity_exceeded: SOFT,
  authentication_required: SOFT,
  processing_error: SOFT_ELSEWHERE,
  issuer_not_available: SOFT_ELSEWHERE,
  try_again_later: SOFT_ELSEWHERE,
  reenter_transaction: SOFT_ELSEWHERE,
  // A cancelled, never-collected PaymentIntent can never charge: it is fenced, so trying elsewhere is safe.
  [CANCELED_DECLINE_CODE]: Object.freeze({ class: 'hard', retryElsewhere: true } as const),
});
