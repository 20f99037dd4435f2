// Every code an Adyen connector can put in a decline (the decline table's keys): the gateway's
// name for each documented refusal reason (refusal-reasons.ts), `adyen_refusal_<n>` for a reason
// number nobody documented, and the codes status-map.ts gives a refusal without a reason.
// `routes validate` warns on a decline-table row keyed by anything else (such as Adyen's own
// number, "5" for blocked_card): it would never apply.

import { ADYEN_REFUSAL_REASONS } from './refusal-reasons.ts';

export const ADYEN_DECLINE_CODES: ReadonlySet<string> = new Set([
  ...Object.values(ADYEN_REFUSAL_REASONS).map((r) => r.code), 'generic_decline', 'adyen_unknown', 'cancelled',
]);

/** Undocumented reason numbers get a stable name (declineCodeForRefusal). */
export const ADYEN_UNLISTED_REFUSAL = /^adyen_refusal_\d+$/;
