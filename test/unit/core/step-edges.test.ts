// One walk per legal edge: the table in states.ts has no dead edges, and step() takes each one.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORE_POLICY, legalEdgeList } from '../../../src/core/index.ts';
import type { PaymentInput, PaymentState } from '../../../src/core/index.ts';
import { approved, challenge, declined, makeEnv, notSent, Sim, unknown, withReturnUrl } from './fixtures.ts';

const HOUR = 3_600_000;
const only = (c: string) => ({ routing: { snapshot: 'v', rule: 'r', candidates: [c], skipped: [] } });

const q = (s: Sim, outcome: Parameters<Sim['authorize']>[0]): PaymentInput => ({ type: 'call_result', ref: { op: 'query', attemptId: s.attempt.id }, outcome });
const fenceAnswer = (s: Sim, outcome: Parameters<Sim['authorize']>[0]): PaymentInput => ({ type: 'call_result', ref: { op: 'fence', attemptId: s.attempt.id }, outcome });

function authUnknown(over = {}): Sim {
  const s = new Sim(makeEnv(), over);
  s.authorize(unknown());
  return s;
}
/** auth_unknown with the fence in flight (query not found past retention). */
function fencing(over = {}): Sim {
  const s = authUnknown(over);
  s.advance(25 * HOUR);
  s.apply(q(s, unknown('not_found')));
  expect(s.attempt.status).toBe('fencing');
  return s;
}
function requiresAction(over = {}): Sim {
  const s = new Sim(makeEnv(), { ...withReturnUrl, ...over });
  s.authorize(challenge());
  expect(s.state).toBe('requires_action');
  return s;
}
function authorized(over = {}): Sim {
  const s = new Sim(makeEnv(), over);
  s.authorize(approved());
  return s;
}
function capturing(): Sim {
  const s = authorized();
  s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: 1000, final: true });
  return s;
}
function captured(final = true): Sim {
  const s = authorized();
  s.apply({ type: 'capture_requested', captureId: 'cap_1', amount: final ? 1000 : 400, final });
  s.apply({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved() });
  return s;
}
function voiding(): Sim {
  const s = authorized();
  s.apply({ type: 'void_requested' });
  return s;
}
function parked(over = {}): Sim {
  const s = fencing(over);
  s.apply(fenceAnswer(s, declined('hard', false)));
  expect(s.state).toBe('needs_review');
  return s;
}
/** Lookups answered "nothing found" but the last, returned: the one that parks an operation whose outcome stayed unknown. */
function lastLookupFindsNothing(s: Sim): PaymentInput {
  for (;;) {
    const input = s.nextLookupFindsNothing();
    if (input === null) throw new Error('no lookup to answer');
    if (s.calls('lookup').at(-1)?.lookup?.n === DEFAULT_CORE_POLICY.maxQueries) return input;
    s.apply(input);
  }
}

function repeat(s: Sim, n: number, input: () => PaymentInput): PaymentInput {
  for (let i = 0; i < n - 1; i++) s.apply(input());
  return input();
}

/** A late approval for `attemptId` (released), then release answers declined `n` times. */
function lateApprovalReleaseFails(s: Sim, attemptId: string, n: number): PaymentInput {
  s.apply({ type: 'provider_fact', fact: { fact: 'authorization', attemptId, outcome: approved(1000, 'pi_late') } });
  const fail = (): PaymentInput => ({ type: 'call_result', ref: { op: 'release', attemptId }, outcome: declined('hard', false) });
  return repeat(s, n, fail);
}
/** Attempt 1 refused (proof), attempt 2 authorized on the second connector. */
function failedOverAuthorized(): Sim {
  const s = new Sim();
  s.authorize(notSent());
  s.authorize(approved(1000, 'psp_2'));
  expect(s.state).toBe('authorized');
  return s;
}
/** Parked because the release of a late approval failed past its bound, from `expired`. */
function parkedForReleaseFromExpired(): Sim {
  const s = failedOverAuthorized();
  s.apply({ type: 'provider_fact', fact: { fact: 'authorization_expired' } });
  s.apply(lateApprovalReleaseFails(s, s.payment.attempts[0]!.id, 3));
  expect(s.state).toBe('needs_review');
  return s;
}

type Walk = () => { sim: Sim; input: PaymentInput | null };
const WALKS: Record<string, Walk> = {
  'created>authorizing': () => ({ sim: new Sim(), input: null }),
  'created>failed': () => ({ sim: new Sim(makeEnv({ openBreakers: new Set(['stripe_a', 'adyen_b']) })), input: null }),
  'authorizing>authorized': () => { const s = new Sim(); s.prepared(); return { sim: s, input: { type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: approved() } }; },
  'authorizing>captured': () => { const s = new Sim(makeEnv(), { captureMethod: 'automatic' }); s.prepared(); return { sim: s, input: { type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: approved() } }; },
  'authorizing>declined': () => { const s = new Sim(); s.prepared(); return { sim: s, input: { type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: declined('hard', false) } }; },
  'authorizing>auth_unknown': () => { const s = new Sim(); s.prepared(); return { sim: s, input: { type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: unknown() } }; },
  'authorizing>requires_action': () => { const s = new Sim(makeEnv(), withReturnUrl); s.prepared(); return { sim: s, input: { type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: challenge() } }; },
  'authorizing>failed': () => { const s = new Sim(makeEnv(), { ...only('stripe_a') }); s.prepared(); return { sim: s, input: repeat(s, 4, () => ({ type: 'call_result', ref: { op: 'authorize', attemptId: s.attempt.id }, outcome: notSent() })) }; },
  'authorizing>needs_review': () => { const s = new Sim(makeEnv(), { captureMethod: 'automatic' }); s.prepared(); s.advance(73 * HOUR); return { sim: s, input: { type: 'timer_fired', timer: 'max_lifetime' } }; },
  'auth_unknown>authorizing': () => { const s = fencing(); return { sim: s, input: fenceAnswer(s, approved(0)) }; },
  'auth_unknown>authorized': () => { const s = authUnknown(); return { sim: s, input: q(s, approved()) }; },
  'auth_unknown>captured': () => { const s = authUnknown({ captureMethod: 'automatic' }); return { sim: s, input: q(s, approved()) }; },
  'auth_unknown>declined': () => { const s = authUnknown(); return { sim: s, input: q(s, declined('hard', false)) }; },
  'auth_unknown>failed': () => { const s = fencing(only('stripe_a')); return { sim: s, input: fenceAnswer(s, approved(0)) }; },
  'auth_unknown>needs_review': () => { const s = fencing(); return { sim: s, input: fenceAnswer(s, declined('hard', false)) }; },
  'auth_unknown>requires_action': () => { const s = authUnknown(withReturnUrl); return { sim: s, input: q(s, challenge()) }; },
  'requires_action>authorizing': () => { const s = requiresAction(); return { sim: s, input: { type: 'customer_returned', attemptId: s.attempt.id, returned: {} } }; },
  'requires_action>authorized': () => { const s = requiresAction(); return { sim: s, input: { type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } } }; },
  'requires_action>captured': () => { const s = requiresAction({ captureMethod: 'automatic' }); return { sim: s, input: { type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: approved() } } }; },
  'requires_action>declined': () => { const s = requiresAction(); return { sim: s, input: { type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: declined('hard', false) } } }; },
  'requires_action>failed': () => {
    const s = requiresAction();
    s.advance(16 * 60_000);
    s.apply({ type: 'timer_fired', timer: 'authentication_expiry', attemptId: s.attempt.id });
    return { sim: s, input: fenceAnswer(s, approved(0)) };
  },
  'requires_action>needs_review': () => {
    const s = requiresAction({ captureMethod: 'automatic' });
    s.advance(16 * 60_000);
    s.apply({ type: 'timer_fired', timer: 'authentication_expiry', attemptId: s.attempt.id });
    return { sim: s, input: fenceAnswer(s, declined('hard', false)) };
  },
  'requires_action>voiding': () => ({ sim: requiresAction(), input: { type: 'void_requested' } }),
  'voiding>requires_action': () => { const s = requiresAction(); s.apply({ type: 'void_requested' }); return { sim: s, input: { type: 'call_result', ref: { op: 'void' }, outcome: declined('hard', false) } }; },
  'authorized>capturing': () => ({ sim: authorized(), input: { type: 'capture_requested', captureId: 'cap_1', amount: 500, final: true } }),
  'authorized>voiding': () => ({ sim: authorized(), input: { type: 'void_requested' } }),
  'authorized>expired': () => ({ sim: authorized(), input: { type: 'provider_fact', fact: { fact: 'authorization_expired' } } }),
  'capturing>captured': () => ({ sim: capturing(), input: { type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: approved() } }),
  'capturing>authorized': () => ({ sim: capturing(), input: { type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: declined('hard', false) } }),
  'capturing>needs_review': () => { const s = capturing(); repeat(s, 5, () => ({ type: 'call_result', ref: { op: 'capture', captureId: 'cap_1' }, outcome: unknown() })); return { sim: s, input: lastLookupFindsNothing(s) }; },
  'captured>capturing': () => ({ sim: captured(false), input: { type: 'capture_requested', captureId: 'cap_2', amount: 600, final: true } }),
  'captured>failed': () => ({ sim: captured(), input: { type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: 'cap_1' } } }),
  'captured>needs_review': () => {
    const s = captured();
    s.apply({ type: 'refund_requested', refundId: 'rfd_1', amount: 500, reason: null });
    s.apply({ type: 'call_result', ref: { op: 'refund', refundId: 'rfd_1' }, outcome: approved() });
    return { sim: s, input: { type: 'provider_fact', fact: { fact: 'capture_reversed', captureId: 'cap_1' } } };
  },
  'voiding>voided': () => ({ sim: voiding(), input: { type: 'call_result', ref: { op: 'void' }, outcome: approved(0) } }),
  'voiding>authorized': () => ({ sim: voiding(), input: { type: 'call_result', ref: { op: 'void' }, outcome: declined('hard', false) } }),
  'voiding>needs_review': () => { const s = voiding(); repeat(s, 5, () => ({ type: 'call_result', ref: { op: 'void' }, outcome: unknown() })); return { sim: s, input: lastLookupFindsNothing(s) }; },
  'authorized>needs_review': () => { const s = failedOverAuthorized(); return { sim: s, input: lateApprovalReleaseFails(s, s.payment.attempts[0]!.id, 3) }; },
  'voided>needs_review': () => {
    const s = failedOverAuthorized();
    s.apply({ type: 'void_requested' });
    s.apply({ type: 'call_result', ref: { op: 'void' }, outcome: approved(0) });
    return { sim: s, input: lateApprovalReleaseFails(s, s.payment.attempts[0]!.id, 3) };
  },
  'declined>needs_review': () => {
    const s = new Sim();
    s.authorize(approved(600));
    const fail = (): PaymentInput => ({ type: 'call_result', ref: { op: 'release', attemptId: s.attempt.id }, outcome: declined('hard', false) });
    return { sim: s, input: repeat(s, 3, fail) };
  },
  'expired>needs_review': () => {
    const s = failedOverAuthorized();
    s.apply({ type: 'provider_fact', fact: { fact: 'authorization_expired' } });
    return { sim: s, input: lateApprovalReleaseFails(s, s.payment.attempts[0]!.id, 3) };
  },
  'failed>needs_review': () => {
    const s = new Sim(makeEnv(), only('stripe_a'));
    for (let i = 0; i < 6 && s.state !== 'failed'; i++) s.authorize(notSent());
    expect(s.state).toBe('failed');
    return { sim: s, input: lateApprovalReleaseFails(s, s.attempt.id, 3) };
  },
  'needs_review>expired': () => {
    const s = parkedForReleaseFromExpired();
    return { sim: s, input: { type: 'call_result', ref: { op: 'release', attemptId: s.payment.attempts[0]!.id }, outcome: approved(0) } };
  },
  'needs_review>authorized': () => ({ sim: parked(), input: { type: 'operator_resolved', as: 'authorized', note: 'provider shows it authorized' } }),
  'needs_review>captured': () => {
    const s = authUnknown({ captureMethod: 'automatic' });
    s.advance(25 * HOUR);
    s.apply(q(s, unknown('not_found')));
    return { sim: s, input: q(s, approved()) };
  },
  'needs_review>voided': () => ({ sim: parked(), input: { type: 'operator_resolved', as: 'voided', note: 'voided at the provider' } }),
  'needs_review>failed': () => ({ sim: parked(), input: { type: 'operator_resolved', as: 'failed', note: 'no charge at the provider' } }),
  'needs_review>declined': () => { const s = parked(); return { sim: s, input: { type: 'provider_fact', fact: { fact: 'authorization', attemptId: s.attempt.id, outcome: declined('hard', false) } } }; },
};

describe('every legal edge', () => {
  it('has exactly one walk per edge of the table', () => {
    expect(Object.keys(WALKS).sort()).toEqual(legalEdgeList().map(([f, t]) => `${f}>${t}`).sort());
  });

  it.each(Object.keys(WALKS))('%s', (edge) => {
    const [from, to] = edge.split('>') as [PaymentState, PaymentState];
    const { sim, input } = WALKS[edge]!();
    if (input === null) {
      expect(sim.edges).toContainEqual([from, to]);
      return;
    }
    expect(sim.state).toBe(from);
    const r = sim.apply(input);
    expect(r.kind).toBe('applied');
    expect([r.kind === 'applied' ? r.from : null, sim.state]).toEqual([from, to]);
  });
});

describe('illegal inputs name the state and the input', () => {
  it.each<[string, () => Sim, PaymentInput]>([
    ['capture of a declined payment', () => { const s = new Sim(); s.authorize(declined('hard', false)); return s; }, { type: 'capture_requested', captureId: 'cap_1', amount: 1, final: true }],
    ['void of a declined payment', () => { const s = new Sim(); s.authorize(declined('hard', false)); return s; }, { type: 'void_requested' }],
    ['refund while authorizing', () => new Sim(), { type: 'refund_requested', refundId: 'rfd_1', amount: 1, reason: null }],
    ['operator on an authorized payment', () => authorized(), { type: 'operator_resolved', as: 'failed', note: 'x' }],
    ['capture while voiding', () => voiding(), { type: 'capture_requested', captureId: 'cap_1', amount: 1, final: true }],
  ])('%s', (_name, make, input) => {
    const s = make();
    const before = s.payment;
    const r = s.apply(input);
    expect(r.kind).toBe('illegal');
    if (r.kind === 'illegal') expect(r.reason).toContain(before.state);
    expect(s.payment).toBe(before);
  });
});
