// Before a worker sends a provider call it asks whether the payment still wants it. A delayed
// resend must never go out after the attempt was fenced, decided or failed over: with an expired
// key it would be a fresh charge.

import type { ProviderCallEffect } from './effects.ts';
import type { Payment } from './payment.ts';

export type Wanted = { readonly wanted: true } | { readonly wanted: false; readonly reason: string };

const YES: Wanted = { wanted: true };
const no = (reason: string): Wanted => ({ wanted: false, reason });

export function isCallStillWanted(p: Payment, e: ProviderCallEffect): Wanted {
  const attempt = p.attempts.find((a) => a.id === e.attemptId);
  if (attempt === undefined) return no(`attempt ${e.attemptId} not found`);
  switch (e.op) {
    case 'prepare':
      return attempt.status === 'preparing' ? YES : no(`attempt is ${attempt.status}`);
    case 'authorize':
      if (attempt.status !== 'authorizing' && attempt.status !== 'unknown') return no(`attempt is ${attempt.status}`);
      // Only the newest send is live: an older delayed send is superseded by it.
      return e.sendNo === undefined || e.sendNo === attempt.sends ? YES : no(`send ${e.sendNo} superseded by send ${attempt.sends}`);
    case 'resume':
      // Only while the customer is back and this resume operation (its key) is the current one.
      if (attempt.status !== 'authenticating' || attempt.authentication?.stage !== 'resuming') return no(`attempt is ${attempt.status}${attempt.authentication === undefined ? '' : ` (${attempt.authentication.stage})`}`);
      return attempt.authentication.resumeKey === e.providerKey ? YES : no(`resume ${e.providerKey ?? '-'} superseded`);
    case 'query':
      return attempt.status === 'unknown' || attempt.status === 'authorizing' || attempt.status === 'review' ? YES : no(`attempt is ${attempt.status}`);
    case 'fence':
      return attempt.status === 'fencing' ? YES : no(`attempt is ${attempt.status}`);
    case 'release':
      if (attempt.status !== 'releasing') return no(`attempt is ${attempt.status}`);
      // Only the current release operation is live: a delayed call of an earlier one (failed since) is not.
      if (attempt.release !== null && e.providerKey !== attempt.release.providerKey) return no(`release ${attempt.release.no} superseded the call with key ${e.providerKey ?? '-'}`);
      return attempt.release !== null && (attempt.release.status === 'succeeded' || attempt.release.status === 'failed') ? no(`release ${attempt.release.no} is ${attempt.release.status}`) : YES;
    case 'capture': {
      const c = p.captures.find((x) => x.id === e.captureId);
      return c !== undefined && (c.status === 'requested' || c.status === 'pending') ? YES : no(`capture is ${c?.status ?? 'missing'}`);
    }
    case 'refund': {
      const r = p.refunds.find((x) => x.id === e.refundId);
      return r !== undefined && (r.status === 'requested' || r.status === 'pending') ? YES : no(`refund is ${r?.status ?? 'missing'}`);
    }
    case 'void': {
      const v = p.voidOp;
      if (v === null || v.providerKey !== e.providerKey) return no(`payment is ${p.state}, current void ${v?.providerKey ?? 'none'}`);
      // The cancel of the remainder after a final partial capture: the payment stays captured while it is open.
      if (v.remainder !== undefined) return v.released !== true && v.failure === undefined ? YES : no(`the remainder's cancel is ${v.released === true ? 'confirmed' : 'failed'}`);
      return p.state === 'voiding' ? YES : no(`payment is ${p.state}`);
    }
    case 'lookup':
      return lookupWanted(p, e);
  }
}

/** A lookup reads the object of one operation: wanted while that operation is still open. */
function lookupWanted(p: Payment, e: ProviderCallEffect): Wanted {
  const about = e.lookup;
  if (about === undefined) return no('lookup without its subject');
  switch (about.op) {
    case 'capture':
      return isCallStillWanted(p, { ...e, op: 'capture' });
    case 'refund':
      return isCallStillWanted(p, { ...e, op: 'refund' });
    case 'void': {
      const open = p.state === 'voiding' || (p.state === 'needs_review' && p.voidOp !== null);
      return open && p.voidOp?.providerKey === about.key ? YES : no(`payment is ${p.state}, current void ${p.voidOp?.providerKey ?? 'none'}`);
    }
    case 'release':
      return isCallStillWanted(p, { ...e, op: 'release', providerKey: about.key });
    case 'fence':
      return isCallStillWanted(p, { ...e, op: 'fence' });
  }
}
