// What the Adyen connector declares about itself, as data: capabilities, policy and the default
// decline table (keyed by the normalized codes of refusal-reasons.ts). The account config may
// override decline rows and shorten key retention.

import type { ConnectorCapabilities, ConnectorPolicy } from '../../core/policy.ts';
import type { DeclineTable } from '../contract.ts';

export const ADYEN_CAPABILITIES: ConnectorCapabilities = Object.freeze({
  manualCapture: true,
  partialCapture: true,
  // Multiple partial captures are an account setting at Adyen (`multicapture` in the config); without
  // it a partial capture cancels the rest. With it the connector's policy says so and that a final
  // partial capture leaves the rest authorized (the core cancels it).
  multicapture: false,
  partialRefund: true,
  // Checkout v72 has no payment lookup: an unknown /payments is resolved by same-key replay or technical cancel.
  queryByReference: false,
  // Checkout v72 has no lookup at all.
  queryByMerchantReference: false,
  cancelByMerchantReference: true,
  preparesAuthorization: false,
  asyncModifications: true,
  // A cancel of a captured payment fails (CANCELLATION / TECHNICAL_CANCEL success=false): under
  // automatic capture a confirmed technical cancel still proves nothing was captured by then.
  cancelRefusedOnceCaptured: true,
  // A vaulted card goes as paymentMethod {type: scheme, number, expiryMonth, expiryYear, cvc?, holderName?}:
  // the API credential must be allowed raw card data (PCI-compliant accounts), else 403 errorCode 010.
  acceptsCardData: true,
});

const DAY = 24 * 60 * 60 * 1000;

export const ADYEN_POLICY: ConnectorPolicy = Object.freeze({
  maxKeyLength: 64,
  // Older docs: keys valid "7 to 14 days"; current docs: at least 31 days. Default to the shorter.
  keyRetentionMs: 7 * DAY,
  authHoldMs: 7 * DAY,
  capabilities: ADYEN_CAPABILITIES,
});

/** Retention may be configured up to Adyen's current documented minimum, never beyond. */
export const ADYEN_MAX_KEY_RETENTION_MS = 31 * DAY;

const HARD = Object.freeze({ class: 'hard', retryElsewhere: false } as const);
const SOFT = Object.freeze({ class: 'soft', retryElsewhere: false } as const);
const SOFT_ELSEWHERE = Object.freeze({ class: 'soft', retryElsewhere: true } as const);

/**
 * Hard: the card or the shopper is the problem; another acquirer would hear the same. Soft +
 * elsewhere: the processing path failed (acquirer error, issuer unavailable). Cancelled: the
 * reference was fenced by a technical cancel, so it can never charge and trying elsewhere is safe.
 */
export const ADYEN_DEFAULT_DECLINES: DeclineTable = Object.freeze({
  generic_decline: SOFT,
  call_issuer: SOFT,
  processing_error: SOFT_ELSEWHERE,
  blocked_card: HARD,
  expired_card: HARD,
  invalid_amount: HARD,
  incorrect_number: HARD,
  issuer_not_available: SOFT_ELSEWHERE,
  card_not_supported: Object.freeze({ class: 'hard', retryElsewhere: true } as const),
  authentication_failed: SOFT,
  insufficient_funds: SOFT,
  fraudulent: HARD,
  cancelled: Object.freeze({ class: 'hard', retryElsewhere: true } as const),
  shopper_cancelled: HARD,
  incorrect_pin: HARD,
  pin_try_exceeded: HARD,
  adyen_risk_fraud: HARD,
  not_submitted: SOFT_ELSEWHERE,
  transaction_not_allowed: HARD,
  incorrect_cvc: HARD,
  restricted_card: HARD,
  revocation_of_authorization: HARD,
  do_not_honor: SOFT,
  card_velocity_exceeded: SOFT,
  invalid_account: HARD,
  authentication_required: SOFT,
  adyen_unknown: SOFT_ELSEWHERE,
});
