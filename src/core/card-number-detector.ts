// Card numbers (PANs) in free text. The merchant API refuses text that holds one (nothing protects
// it there) and log redaction masks them. card-validator decides what a card number is (a known
// brand's prefix and length, and Luhn, UnionPay included); this file only finds the candidates:
// runs of 13 to 19 digits, whole or in groups joined by single spaces or dashes, as people write them.

import cardValidator from 'card-validator';
import luhn10 from 'card-validator/dist/luhn-10.js';

/** Digit groups joined by single spaces or dashes (4242 4242 4242 4242, 4242-4242-4242-4242). Unambiguous: no backtracking blow-up. */
const DIGIT_GROUPS = /\d+(?:[ -]\d+)*/g;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const JOINER = new Set(['-', '_']);
const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

export interface CardNumberSpan {
  /** Where the card number starts and ends in the text (end exclusive), separators included. */
  readonly start: number;
  readonly end: number;
}

export interface CardNumberSearch {
  /**
   * Count digits joined to a word (`ORD4242…`, `ORD-4242…`, `…4242-A`) too. Off for merchant text:
   * a run that is part of a word is an identifier, and a prefix is how a merchant avoids a false
   * positive. On for logs, where masking an order number costs nothing.
   */
  readonly includeJoined?: boolean;
}

/** Verdicts by digit string: card-validator takes ~30 µs a call, and hostile text repeats itself. */
const verdicts = new Map<string, boolean>();
const MAX_VERDICTS = 10_000;

export function isCardNumber(digits: string): boolean {
  // Luhn first (the library's own, a necessary condition since UnionPay is Luhn-checked too): it turns most candidates away for almost nothing.
  if (digits.length < MIN_DIGITS || digits.length > MAX_DIGITS || !luhn10(digits)) return false;
  let verdict = verdicts.get(digits);
  if (verdict === undefined) {
    verdict = cardValidator.number(digits, { luhnValidateUnionPay: true }).isValid;
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(digits, verdict);
  }
  return verdict;
}

const isWordChar = (c: string | undefined): boolean => c !== undefined && WORD_CHAR.test(c);

/** The run touches a word: a letter or digit next to it, or one behind a single `-`/`_`. */
function joinedToWord(text: string, start: number, end: number): boolean {
  const before = text[start - 1];
  const after = text[end];
  if (isWordChar(before) || isWordChar(after)) return true;
  if (before !== undefined && JOINER.has(before) && isWordChar(text[start - 2])) return true;
  return after !== undefined && JOINER.has(after) && isWordChar(text[end + 1]);
}

interface Group {
  readonly start: number;
  readonly end: number;
  readonly digits: string;
}

/** Every card number in the text, in order; overlapping candidates (4242 4242 4242 4242 4242) are merged into one span. */
export function findCardNumbers(text: string, o: CardNumberSearch = {}): CardNumberSpan[] {
  const spans: CardNumberSpan[] = [];
  for (const m of text.matchAll(DIGIT_GROUPS)) {
    const runStart = m.index;
    const runEnd = runStart + m[0].length;
    const total = m[0].replace(/[ -]/g, '').length;
    if (total < MIN_DIGITS) continue;
    if (o.includeJoined !== true && joinedToWord(text, runStart, runEnd)) continue;
    const groups: Group[] = [];
    for (const g of m[0].matchAll(/\d+/g)) groups.push({ start: runStart + g.index, end: runStart + g.index + g[0].length, digits: g[0] });
    // A run longer than a card may hold one at either end ("invoice 2024 4242 4242 4242 4242"): whole
    // groups from the start, then from the end. Not every window in between: a long run of short
    // groups would cost thousands of checks for one line of hostile text.
    for (const [i, j] of windowsAtTheEnds(groups)) addMerged(spans, { start: groups[i]!.start, end: groups[j]!.end });
  }
  return spans;
}

/** [first, last] group indexes of the card numbers that start at the run's first group or end at its last. */
function windowsAtTheEnds(groups: readonly Group[]): [number, number][] {
  const found: [number, number][] = [];
  let digits = '';
  for (let j = 0; j < groups.length && digits.length + groups[j]!.digits.length <= MAX_DIGITS; j++) {
    digits += groups[j]!.digits;
    if (isCardNumber(digits)) found.push([0, j]);
  }
  digits = '';
  const last = groups.length - 1;
  for (let i = last; i > 0 && digits.length + groups[i]!.digits.length <= MAX_DIGITS; i--) {
    digits = groups[i]!.digits + digits;
    if (isCardNumber(digits)) found.push([i, last]);
  }
  return found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

function addMerged(spans: CardNumberSpan[], s: CardNumberSpan): void {
  const last = spans[spans.length - 1];
  if (last !== undefined && s.start < last.end) spans[spans.length - 1] = { start: last.start, end: Math.max(last.end, s.end) };
  else spans.push(s);
}

export function containsCardNumber(text: string, o: CardNumberSearch = {}): boolean {
  return findCardNumbers(text, o).length > 0;
}

/** The text with each card number replaced. */
export function maskCardNumbers(text: string, replacement: string, o: CardNumberSearch = {}): string {
  let out = '';
  let at = 0;
  for (const s of findCardNumbers(text, o)) {
    out += text.slice(at, s.start) + replacement;
    at = s.end;
  }
  return out + text.slice(at);
}
