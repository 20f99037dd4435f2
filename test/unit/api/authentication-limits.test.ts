// The pieces the customer's authentication routes are limited and authorised by (issue 42 §1):
// the client address behind trusted proxies, token buckets that keep memory bounded when keys come
// from the network, and the attempt tokens (single-purpose, per attempt, constant-time compared).
import { describe, expect, it } from 'vitest';
import type { Request } from 'express';
import { clientAddress } from '../../../src/api/client-address.ts';
import { TokenBuckets } from '../../../src/api/process-buckets.ts';
import { trustList } from '../../../src/ops/operator-auth.ts';
import { attemptToken, newTokenKey, tokenMatches } from '../../../src/resources/authentication-tokens.ts';

const request = (peer: string, xff?: string): Request => ({
  socket: { remoteAddress: peer },
  get: (name: string) => (name.toLowerCase() === 'x-forwarded-for' ? xff : undefined),
}) as unknown as Request;

describe('clientAddress', () => {
  const proxies = trustList(['10.0.0.0/8', '192.0.2.1']);

  it('is the peer unless the peer is a trusted proxy', () => {
    expect(clientAddress(request('203.0.113.5', '198.51.100.1'), proxies)).toBe('203.0.113.5');
    expect(clientAddress(request('::ffff:203.0.113.5'), null)).toBe('203.0.113.5');
    expect(clientAddress(request('192.0.2.1', '198.51.100.1'), null)).toBe('192.0.2.1');
  });

  it('behind trusted proxies: the nearest address no trusted proxy stands for, read from the right', () => {
    expect(clientAddress(request('10.1.1.1', '198.51.100.1'), proxies)).toBe('198.51.100.1');
    expect(clientAddress(request('10.1.1.1', '6.6.6.6, 198.51.100.1, 192.0.2.1'), proxies)).toBe('198.51.100.1');
    // A trusted proxy that names no one (or something that is no address) is the client as far as we know.
    expect(clientAddress(request('10.1.1.1'), proxies)).toBe('10.1.1.1');
    expect(clientAddress(request('10.1.1.1', 'unknown'), proxies)).toBe('10.1.1.1');
  });
});

describe('TokenBuckets', () => {
  it('limits each key on its own and refills with time', () => {
    let now = 0;
    const b = new TokenBuckets({ perSecond: 1, burst: 2 }, () => now);
    expect([b.take('a'), b.take('a'), b.take('a')]).toEqual([0, 0, 1]);
    expect(b.take('b')).toBe(0);
    now += 1000;
    expect(b.take('a')).toBe(0);
  });

  it('peek says what take would, without taking', () => {
    const now = 0;
    const b = new TokenBuckets({ perSecond: 0.5, burst: 1 }, () => now);
    expect([b.peek('a'), b.peek('a')]).toEqual([0, 0]);
    expect(b.take('a')).toBe(0);
    expect([b.peek('a'), b.peek('a')]).toEqual([2, 2]);
    expect(b.take('a')).toBe(2);
  });

  it('keeps at most maxBuckets: full ones go first, then the least recently used', () => {
    let now = 0;
    const b = new TokenBuckets({ perSecond: 1, burst: 5 }, () => now, 3);
    for (const k of ['a', 'b', 'c']) b.take(k);
    now += 10_000; // all full again
    b.take('d');
    expect(b.size).toBe(1);
    for (const k of ['e', 'f']) b.take(k);
    b.take('d'); // d used most recently; e is the oldest in use
    b.take('g');
    expect(b.size).toBe(3);
    for (let i = 0; i < 1000; i += 1) b.take(`flood-${i}`);
    expect(b.size).toBeLessThanOrEqual(3);
  });
});

describe('attempt tokens', () => {
  it('are per attempt and per purpose, from a per-payment key, and only the exact token matches', () => {
    const key = newTokenKey();
    const page = attemptToken(key, 'page', 'att_1');
    expect(page).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(attemptToken(key, 'page', 'att_1')).toBe(page);
    expect(tokenMatches(key, 'page', 'att_1', page)).toBe(true);
    expect(tokenMatches(key, 'return', 'att_1', page)).toBe(false);
    expect(tokenMatches(key, 'page', 'att_2', page)).toBe(false);
    expect(tokenMatches(newTokenKey(), 'page', 'att_1', page)).toBe(false);
    expect(tokenMatches(key, 'page', 'att_1', page.slice(0, -1))).toBe(false);
    expect(tokenMatches(key, 'page', 'att_1', [page])).toBe(false);
    expect(tokenMatches(undefined, 'page', 'att_1', page)).toBe(false);
  });
});
