// Why the run's parked payments are parked, grouped so a report can count them (issue 41 §6):
// a payment in needs_review by the reason of its transition there, one with an open discrepancy by
// the discrepancy's kind. Pure.

/** A reason with its numbers and ids taken out ("capture 2 unresolved after 6 calls" → "capture # unresolved after # calls"). */
export function reasonKey(reason: string): string {
  return reason
    .replace(/\b(pay|att|cap|rf|re|pi|ch|psp|ob|evt)_[A-Za-z0-9]+/g, '<id>')
    .replace(/\b[A-Z0-9]{16}\b/g, '<id>')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

export interface ParkedPayment {
  readonly id: string;
  readonly state: string;
}

/**
 * Counts of parked payments by reason: `needs_review: <reason>` for a payment in needs_review (the
 * last transition that took it there), `discrepancy: <kind>` for one that is not but has an open
 * discrepancy (the first one opened).
 */
export function needsReviewByReason(
  payments: readonly ParkedPayment[],
  reviewReasons: ReadonlyMap<string, string>,
  openDiscrepancyKinds: ReadonlyMap<string, readonly string[]>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of payments) {
    const kinds = openDiscrepancyKinds.get(p.id) ?? [];
    let key: string | null = null;
    if (p.state === 'needs_review') key = `needs_review: ${reasonKey(reviewReasons.get(p.id) ?? 'unknown')}`;
    else if (kinds.length > 0) key = `discrepancy: ${kinds[0]!}`;
    if (key !== null) out[key] = (out[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}
