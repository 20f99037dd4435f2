// Which connector a payment is "on": the one the resource shows as `connector` and the list filter
// matches. One rule for both, so a filtered list never disagrees with the payments it answers.

import type { Payment } from './payment.ts';

/** The attempt holding the payment (authorized, else parked for review), else the latest attempt's; null before any attempt. */
export function paymentConnector(p: Pick<Payment, 'attempts'>): string | null {
  const holding = p.attempts.find((a) => a.status === 'authorized') ?? p.attempts.find((a) => a.status === 'review');
  return holding?.connector ?? p.attempts[p.attempts.length - 1]?.connector ?? null;
}
