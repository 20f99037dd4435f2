// A planted bug's run drives only the lifecycles its bug lives in (plan.ts `keep`): the kept ones
// are exactly the lifecycles the unfiltered plan of that seed has at those indexes, the fault
// schedule spreads over the kept ones' operations, and a filter nothing passes is an error, not a
// run with no workload.

import { describe, expect, it } from 'vitest';
import { makePlan } from '../../../chaos/plan.ts';
import type { PaymentPlan } from '../../../chaos/plan.ts';
import { PLANTED_PLANS } from '../../../chaos/planted-plans.ts';
import { PLANTED_BUGS } from '../../../chaos/planted-bugs.ts';

const base = { merchants: 6, accounts: ['stripe_c', 'adyen_c'], faultRate: 0.25, kills: false, clientTimeoutMs: 1_500 } as const;
const eur = (p: PaymentPlan): boolean => p.currency === 'EUR';

describe('makePlan with a workload filter', () => {
  it('keeps `payments` lifecycles that pass, each the one the unfiltered plan has at its index', () => {
    const kept = makePlan({ ...base, seed: 7, payments: 5, keep: eur });
    expect(kept.payments).toHaveLength(5);
    expect(kept.payments.every(eur)).toBe(true);
    const last = kept.payments.at(-1)!.index;
    const full = makePlan({ ...base, seed: 7, payments: last + 1 });
    for (const p of kept.payments) expect(p).toEqual(full.payments[p.index]);
    expect(full.payments.filter(eur).map((p) => p.index)).toEqual(kept.payments.map((p) => p.index));
  });

  it('spreads the faults over the kept lifecycles only', () => {
    const kept = makePlan({ ...base, seed: 7, payments: 5, keep: eur, kinds: ['error_503'], faultRate: 1 });
    expect(kept.faults.length).toBeGreaterThan(0);
    expect(Math.max(...kept.faults.map((f) => f.atOp))).toBeLessThanOrEqual(kept.expectedOps);
  });

  it('refuses a filter too few candidates pass', () => {
    expect(() => makePlan({ ...base, seed: 7, payments: 2, keep: () => false })).toThrow(/fewer than 2 lifecycles/);
  });

  it('every planted bug has a plan whose filter its seed can fill', () => {
    for (const bug of PLANTED_BUGS) {
      const aim = PLANTED_PLANS[bug];
      const plan = makePlan({ ...base, seed: aim.seed, payments: aim.payments, keep: aim.keep, kinds: aim.kinds, faultRate: aim.rate });
      expect(plan.payments.length, bug).toBe(aim.payments);
    }
  });
});
