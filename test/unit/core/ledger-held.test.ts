// Money held for a release (issue 29): under automatic capture an approval the payment does not
// keep is booked as held when the provider confirms it, moved out when the release refund is
// confirmed, held again when that refund is reversed; a void release (manual capture) books nothing.
import { describe, expect, it } from 'vitest';
import { postingFor } from '../../../src/core/index.ts';
import type { Effect, LedgerEffect, PaymentInput } from '../../../src/core/index.ts';
import { approved, makeEnv, notSent, Sim } from './fixtures.ts';

const held = (effects: readonly Effect[]) => effects.filter((e): e is LedgerEffect => e.type === 'ledger' && (e.posting === 'held_for_release' || e.posting === 'release_refunded')).map((e) => [e.posting, e.amount, e.attemptId]);

function lateApproval(captureMethod: 'automatic' | 'manual'): { s: Sim; id: string } {
  const s = new Sim(makeEnv(), { captureMethod });
  s.authorize(notSent());
  s.authorize(approved(1000, 'psp_2'));
  const id = s.payment.attempts[0]!.id;
  s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId: id, outcome: approved(1000, 'pi_late') } });
  return { s, id };
}
const fact = (attemptId: string, ok: boolean, providerRef?: string): PaymentInput => ({
  type: 'provider_fact', fact: { fact: ok ? 'release_succeeded' : 'release_failed', attemptId, ...(providerRef === undefined ? {} : { providerRef }) },
});

describe('held for release', () => {
  it('late approval under automatic capture: held at approval, moved out once at confirmation', () => {
    const { s, id } = lateApproval('automatic');
    expect(held(s.effects)).toEqual([['held_for_release', 1000, id]]);
    s.apply({ type: 'call_result', ref: { op: 'release', attemptId: id }, outcome: { kind: 'succeeded', providerRef: 're_1', amount: 1000 } });
    s.apply(fact(id, true, 're_1'));
    expect(held(s.effects)).toEqual([['held_for_release', 1000, id], ['release_refunded', 1000, id]]);
  });

  it('a release refund reversed after success is held again, and moved out by the next round', () => {
    const { s, id } = lateApproval('automatic');
    s.apply(fact(id, true, 're_1'));
    s.apply(fact(id, false, 're_1'));
    expect(s.payment.attempts[0]!.release).toMatchObject({ round: 2, held: 1000 });
    s.apply(fact(id, true));
    expect(held(s.effects).map((x) => x[0])).toEqual(['held_for_release', 'release_refunded', 'held_for_release', 'release_refunded']);
  });

  it('a void release under manual capture books nothing', () => {
    const { s, id } = lateApproval('manual');
    s.apply(fact(id, true));
    expect(held(s.effects)).toEqual([]);
  });

  it('the postings: receivable against held_for_release, and back', () => {
    const hold = postingFor({ type: 'ledger', posting: 'held_for_release', amount: 700, currency: 'EUR', connector: 'stripe_a' }, 'mer_1');
    expect(hold.lines).toEqual([
      { account: 'connector:stripe_a:receivable', direction: 'debit', amount: 700, currency: 'EUR' },
      { account: 'connector:stripe_a:held_for_release', direction: 'credit', amount: 700, currency: 'EUR' },
    ]);
    const out = postingFor({ type: 'ledger', posting: 'release_refunded', amount: 700, currency: 'EUR', connector: 'stripe_a' }, 'mer_1');
    expect(out.lines.map((l) => [l.account, l.direction])).toEqual([['connector:stripe_a:held_for_release', 'debit'], ['connector:stripe_a:receivable', 'credit']]);
  });
});
