// The chaos invariants over hand-made run data (issue 20): an approval the payment released must
// hold no money at the provider after quiescence; a fully refunded release refund holds none, and
// the payment's own amounts are compared with the attempt it kept.
import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../../chaos/invariants.ts';
import type { AttemptRow, RunData, SandboxEntry } from '../../../chaos/run-data.ts';

const noDriver = { exchanges: [], misbehaviours: [], forgedEvents: [] };
const release = { no: 1, round: 1, status: 'succeeded', kind: 'refund' };

function run(entry: Partial<SandboxEntry>, attempt: Partial<AttemptRow> = {}, state = 'declined'): RunData {
  return {
    payments: [{ id: 'pay_1', state, amount: 1000, currency: 'USD', amount_authorized: 0, amount_captured: 0, amount_refunded: 0 }],
    attempts: [{ id: 'att_1', payment_id: 'pay_1', no: 1, connector: 'stripe_c', status: 'released', proof: null, release, ...attempt }],
    captures: [], refunds: [], transitions: [], outbox: [], inbound: [],
    sandbox: [{ account: 'stripe_c', id: 'pi_1', reference: 'att_1', status: 'succeeded', authorized: 500, captured: 500, refunded: 0, cancelled: false, ...entry }],
    openDiscrepancies: new Set(), ledgerProblems: [],
  };
}
const invariantsOf = (d: RunData) => checkInvariants(d, noDriver).map((v) => v.invariant);

describe('no_double_charge and released approvals', () => {
  it('a released approval the provider still holds is a violation (the accepted-release bug)', () => {
    expect(invariantsOf(run({}))).toEqual(['no_double_charge']);
  });

  it('a release refund the provider refunded holds nothing: no violation, and the kept amounts are not compared with it', () => {
    expect(invariantsOf(run({ refunded: 500 }))).toEqual([]);
  });

  it('a payment parked for a person with its release failed is left to the operator', () => {
    expect(invariantsOf(run({}, { status: 'review', release: { ...release, status: 'review' } }, 'needs_review'))).toEqual([]);
  });
});
