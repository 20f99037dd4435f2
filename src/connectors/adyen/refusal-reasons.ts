// Adyen's refusal reasons as documented (docs.adyen.com/development-resources/refusal-reasons):
// refusalReasonCode -> refusalReason text, and the gateway's normalized decline code for each.
// Codes 23 and up are only partly confirmed (research/providers.md B2). The hard/soft decision is
// not here: it is the decline table's (defaults.ts, overridable in config), keyed by `code`.

export interface RefusalReason {
  readonly text: string;
  /** The gateway's normalized decline code (Stripe's vocabulary where one fits). */
  readonly code: string;
}

export const ADYEN_REFUSAL_REASONS: Readonly<Record<string, RefusalReason>> = Object.freeze({
  '0': { text: 'Unknown', code: 'adyen_unknown' },
  '2': { text: 'Refused', code: 'generic_decline' },
  '3': { text: 'Referral', code: 'call_issuer' },
  '4': { text: 'Acquirer Error', code: 'processing_error' },
  '5': { text: 'Blocked Card', code: 'blocked_card' },
  '6': { text: 'Expired Card', code: 'expired_card' },
  '7': { text: 'Invalid Amount', code: 'invalid_amount' },
  '8': { text: 'Invalid Card Number', code: 'incorrect_number' },
  '9': { text: 'Issuer Unavailable', code: 'issuer_not_available' },
  '10': { text: 'Not supported', code: 'card_not_supported' },
  '11': { text: '3D Not Authenticated', code: 'authentication_failed' },
  '12': { text: 'Not enough balance', code: 'insufficient_funds' },
  '14': { text: 'Acquirer Fraud', code: 'fraudulent' },
  '15': { text: 'Cancelled', code: 'cancelled' },
  '16': { text: 'Shopper Cancelled', code: 'shopper_cancelled' },
  '17': { text: 'Invalid Pin', code: 'incorrect_pin' },
  '18': { text: 'Pin tries exceeded', code: 'pin_try_exceeded' },
  '19': { text: 'Pin validation not possible', code: 'pin_validation_not_possible' },
  '20': { text: 'FRAUD', code: 'adyen_risk_fraud' },
  '21': { text: 'Not Submitted', code: 'not_submitted' },
  '22': { text: 'FRAUD-CANCELLED', code: 'adyen_risk_fraud' },
  '23': { text: 'Transaction Not Permitted', code: 'transaction_not_allowed' },
  '24': { text: 'CVC Declined', code: 'incorrect_cvc' },
  '25': { text: 'Restricted Card', code: 'restricted_card' },
  '26': { text: 'Revocation Of Auth', code: 'revocation_of_authorization' },
  '27': { text: 'Declined Non Generic', code: 'do_not_honor' },
  '28': { text: 'Withdrawal amount exceeded', code: 'card_velocity_exceeded' },
  '29': { text: 'Withdrawal count exceeded', code: 'card_velocity_exceeded' },
  '31': { text: 'Issuer Suspected Fraud', code: 'fraudulent' },
  '32': { text: 'AVS Declined', code: 'avs_declined' },
  '33': { text: 'Card requires online pin', code: 'online_pin_required' },
  '34': { text: 'No checking account available on Card', code: 'invalid_account' },
  '35': { text: 'No savings account available on Card', code: 'invalid_account' },
  '36': { text: 'Mobile PIN required', code: 'online_pin_required' },
  '37': { text: 'Contactless fallback', code: 'contactless_fallback' },
  '38': { text: 'Authentication required', code: 'authentication_required' },
});

/** A code nobody documented still gets a stable, table-addressable name. */
export function declineCodeForRefusal(refusalReasonCode: string): string {
  return Object.hasOwn(ADYEN_REFUSAL_REASONS, refusalReasonCode) ? (ADYEN_REFUSAL_REASONS[refusalReasonCode]?.code ?? `adyen_refusal_${refusalReasonCode}`) : `adyen_refusal_${refusalReasonCode}`;
}

/** Notifications carry only the refusal text (`reason`): find its code, case-insensitively. */
export function refusalCodeForText(text: string): string | null {
  const wanted = text.trim().toLowerCase();
  for (const [code, r] of Object.entries(ADYEN_REFUSAL_REASONS)) if (r.text.toLowerCase() === wanted) return code;
  return null;
}
