// Every code a Stripe connector can put in a decline (the decline table's keys): the issuer's
// `decline_code` as Stripe sends it, else the error's `code` (status-map.ts stripeDeclineFacts),
// plus the gateway's own codes for a failed authentication, a cancelled PaymentIntent and a failed
// refund. `routes validate` warns on a decline-table row keyed by anything else: it would never apply.
//
// Source: docs.stripe.com/declines/codes (card decline codes), docs.stripe.com/error-codes (the
// card error codes a 402 carries without a decline_code), docs.stripe.com/api/refunds/object
// (failure_reason).

import { CANCELED_DECLINE_CODE } from './status-map.ts';

const CARD_DECLINE_CODES = [
  'approve_with_id', 'authentication_required', 'call_issuer', 'card_not_supported', 'card_velocity_exceeded',
  'currency_not_supported', 'do_not_honor', 'do_not_try_again', 'duplicate_transaction', 'expired_card', 'fraudulent',
  'generic_decline', 'incorrect_number', 'incorrect_cvc', 'incorrect_pin', 'incorrect_zip', 'insufficient_funds',
  'invalid_account', 'invalid_amount', 'invalid_cvc', 'invalid_expiry_month', 'invalid_expiry_year', 'invalid_number',
  'invalid_pin', 'issuer_not_available', 'lost_card', 'merchant_blacklist', 'mobile_device_authentication_required',
  'new_account_information_available', 'no_action_taken', 'not_permitted', 'offline_pin_required',
  'online_or_offline_pin_required', 'pickup_card', 'pin_try_exceeded', 'processing_error', 'reenter_transaction',
  'restricted_card', 'revocation_of_all_authorizations', 'revocation_of_authorization', 'security_violation',
  'service_not_allowed', 'stolen_card', 'stop_payment_order', 'testmode_decline', 'transaction_not_allowed',
  'try_again_later', 'withdrawal_count_limit_exceeded',
];

/** A card error's `code` when it has no decline_code. */
const CARD_ERROR_CODES = ['card_declined', 'card_decline_rate_limit_exceeded', 'expired_card', 'incorrect_cvc', 'incorrect_number', 'incorrect_zip', 'invalid_cvc', 'invalid_expiry_month', 'invalid_expiry_year', 'invalid_number', 'processing_error', 'authentication_required'];

/** A refund's failure_reason, or refund_<status> without one (status-map.ts). */
const REFUND_FAILURE_CODES = ['charge_for_pending_refund_disputed', 'declined', 'expired_or_canceled_card', 'insufficient_funds', 'lost_or_stolen_card', 'merchant_request', 'unknown', 'refund_failed', 'refund_canceled'];

export const STRIPE_DECLINE_CODES: ReadonlySet<string> = new Set([
  ...CARD_DECLINE_CODES, ...CARD_ERROR_CODES, ...REFUND_FAILURE_CODES, 'authentication_failed', CANCELED_DECLINE_CODE,
]);
