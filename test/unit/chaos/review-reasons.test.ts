import { describe, expect, it } from 'vitest';
import { needsReviewByReason, reasonKey } from '../../../chaos/review-reasons.ts';

describe('needs_review_by_reason', () => {
  it('groups reasons with their numbers and ids taken out', () => {
    expect(reasonKey('release 2 of attempt 1 unresolved after 6 calls (unknown)')).toBe('release # of attempt # unresolved after # calls (unknown)');
    expect(reasonKey('capture cap_9fK2 of 500 unresolved on SY3KQ8ZP2MDX7HJ4')).toBe('capture <id> of # unresolved on <id>');
  });

  it('counts payments in needs_review by their reason, the others parked by their first open discrepancy', () => {
    const payments = [
      { id: 'a', state: 'needs_review' }, { id: 'b', state: 'needs_review' }, { id: 'c', state: 'captured' }, { id: 'd', state: 'authorized' }, { id: 'e', state: 'needs_review' },
    ];
    const reasons = new Map([['a', 'capture 1 unresolved'], ['b', 'capture 2 unresolved']]);
    const kinds = new Map([['c', ['late_approval', 'release_failed']], ['a', ['release_failed']]]);
    expect(needsReviewByReason(payments, reasons, kinds)).toEqual({ 'needs_review: capture # unresolved': 2, 'discrepancy: late_approval': 1, 'needs_review: unknown': 1 });
  });
});
