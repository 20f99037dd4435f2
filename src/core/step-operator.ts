// The operator's way out of needs_review, with the money guards (issue 29). A person may not
// resolve away captured money: `failed` / `voided` are refused while anything captured is still
// the customer's or the merchant's, while a capture, refund or release is in flight, or while the
// provider's records (looked up for the operator first) show an attempt authorised or captured —
// unless an override names its reason (kept with the operator's name in this input, on the
// transition row, and as an operator_override discrepancy). What the operator may do instead:
// keep it as captured, or refund what was captured through the normal refund path.

import { illegal } from './draft.ts';
import type { Draft, StepResult } from './draft.ts';
import type { OperatorResolution, ProviderView } from './inputs.ts';

/** Why `failed` / `voided` would hide money; empty when nothing is in the way. */
export function moneyGuards(d: Draft, provider: readonly ProviderView[] = []): string[] {
  const out: string[] = [];
  const net = d.p.amountCaptured - d.p.amountRefunded;
  if (net > 0) out.push(`${net} ${d.p.currency} is captured (captured ${d.p.amountCaptured}, refunded ${d.p.amountRefunded})`);
  for (const c of d.captures) if (c.status === 'requested' || c.status === 'pending') out.push(`capture ${c.no} of ${c.amount} is in flight (${c.status})`);
  for (const r of d.refunds) if (r.status === 'requested' || r.status === 'pending') out.push(`refund ${r.no} of ${r.amount} is in flight (${r.status})`);
  for (const a of d.attempts) {
    const r = a.release;
    if (r === null && a.status !== 'releasing') continue;
    if (a.status === 'releasing' || r?.status === 'requested' || r?.status === 'pending') out.push(`the release of attempt ${a.no} is in flight`);
    // A release refund not confirmed: the customer's money is still captured at the provider.
    else if (r !== null && r.kind === 'refund' && r.status !== 'succeeded') out.push(`attempt ${a.no}'s ${r.amount} captured under automatic capture is not yet refunded (release ${r.status})`);
  }
  for (const v of provider) {
    if (v.shows !== 'authorized' && v.shows !== 'captured') continue;
    const a = d.attempt(v.attemptId);
    out.push(`the provider shows attempt ${a?.no ?? v.attemptId} ${v.shows}${v.detail === undefined ? '' : ` (${v.detail})`}`);
  }
  return out;
}

export interface OperatorInput {
  readonly as: OperatorResolution;
  readonly note: string;
  readonly operator?: string | undefined;
  readonly override?: string | undefined;
  readonly provider?: readonly ProviderView[] | undefined;
}

export function onOperator(d: Draft, o: OperatorInput): StepResult | null {
  if (d.p.state !== 'needs_review') return illegal('invalid_state', `operator resolution needs a payment in needs_review, not ${d.p.state}`);
  if (o.note.trim() === '') return illegal('invalid_state', 'operator resolution needs a note');
  const attempt = d.attempts[d.attempts.length - 1];
  const who = o.operator?.trim() ?? '';
  if (o.as === 'authorized' || o.as === 'captured') {
    if (attempt === undefined) return illegal('invalid_state', `no attempt to mark ${o.as}`);
    if (o.as === 'captured' && d.p.amountCaptured === 0) return illegal('invalid_state', 'nothing is captured: resolve as authorized, failed or voided');
    const amount = attempt.amountAuthorized > 0 ? attempt.amountAuthorized : d.p.amount;
    d.updateAttempt(attempt.id, { status: 'authorized', amountAuthorized: amount });
    d.p.amountAuthorized = Math.max(d.p.amountAuthorized, amount);
    d.setState(d.p.amountCaptured > 0 ? 'captured' : 'authorized', `operator: ${o.note}`);
    return null;
  }
  const guards = moneyGuards(d, o.provider);
  const override = o.override?.trim() ?? '';
  if (guards.length > 0 && override === '') {
    const instead = d.p.amountCaptured > 0
      ? 'resolve as captured (keep it), then refund what was captured through the normal refund path'
      : "wait for the provider's confirmation of what is in flight or held";
    return illegal('invalid_state', `cannot resolve as ${o.as}: ${guards.join('; ')}. Instead: ${instead}; or override with a reason`);
  }
  if (guards.length > 0) {
    if (who === '') return illegal('invalid_state', 'an override needs the operator who takes it');
    d.emit({ type: 'discrepancy', kind: 'operator_override', detail: `resolved as ${o.as} by ${who} over: ${guards.join('; ')}. Reason: ${override}` });
  }
  if (attempt !== undefined && attempt.status === 'review') {
    d.updateAttempt(attempt.id, { status: o.as === 'voided' ? 'released' : 'abandoned', proof: o.as === 'voided' ? null : attempt.proof });
  }
  d.setState(o.as, `operator: ${o.note}${guards.length > 0 ? ` [override by ${who}: ${override}]` : ''}`);
  return null;
}
