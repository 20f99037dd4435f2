// A payment parked for review is asked about again (issue 41 §6): the recovery sweeper fires
// `parked_recheck` with a growing interval and a cap (recovery-cadences.ts), and what the provider
// can tell is asked once more — the object of a capture or void whose outcome stayed unknown looked
// up (where the connector reads objects back), an attempt whose authorization stayed unknown
// queried. The answers go through the operations' own handlers, which un-park the payment by the
// same transition rules as any late answer (needs_review → captured, voided, authorized, …); an
// answer that still says nothing parks it again, as before. A person's decision is never guessed.

import { noop } from './draft.ts';
import type { Draft, StepResult } from './draft.ts';
import { emitLookup } from './lookup-effect.ts';
import { queryParkedAttempt } from './step-authorize.ts';
import { authorizedAttempt } from './step-modify.ts';

export function onParkedRecheck(d: Draft): StepResult | null {
  if (d.p.state !== 'needs_review') return noop(`recheck while ${d.p.state}: not parked`);
  const asked: string[] = [];
  const kept = authorizedAttempt(d);
  if (kept !== undefined && d.policy(kept.connector).capabilities.looksUpOperations === true) {
    for (const c of d.captures.filter((x) => x.status === 'requested' || x.status === 'pending')) {
      emitLookup(d, kept, { op: 'capture', captureId: c.id }, 1, c.amount);
      asked.push(`capture ${c.no}`);
    }
    const v = d.p.voidOp;
    if (v !== null && v.failure === undefined && kept.status === 'authorized') {
      emitLookup(d, kept, { op: 'void', key: v.providerKey }, 1, d.p.amountAuthorized);
      asked.push(`void ${v.no}`);
    }
  }
  // Attempts parked because their authorization stayed unknown (not a release parked for review).
  for (const a of d.attempts.filter((x) => x.status === 'review' && (x.release ?? null) === null)) {
    if (queryParkedAttempt(d, a)) asked.push(`attempt ${a.no}`);
  }
  if (asked.length === 0) return noop('parked: nothing the provider can be asked again');
  d.note(`parked: asking the provider again about ${asked.join(', ')}`);
  return null;
}
