import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorBreakers, isAvailabilityFailure } from '../../../src/routing/breakers.ts';
import type { CallOutcome } from '../../../src/core/outcome.ts';

const settings = { error_threshold_pct: 50, volume_threshold: 4, reset_ms: 200, rolling_window_ms: 10_000 };
const ok: CallOutcome = { kind: 'succeeded', providerRef: 'pi', amount: 1 };
const decline: CallOutcome = { kind: 'declined', class: 'hard', retryElsewhere: false, code: 'stolen_card', providerCode: 'x' };
const refused: CallOutcome = { kind: 'not_sent', reason: 'connection_refused' };
const timeout: CallOutcome = { kind: 'unknown', reason: 'timeout' };

let breakers: ConnectorBreakers | null = null;
afterEach(() => breakers?.shutdown());

describe('connector breakers', () => {
  it('classifies availability failures; declines and validation errors are the provider working', () => {
    expect(isAvailabilityFailure(refused)).toBe(true);
    expect(isAvailabilityFailure(timeout)).toBe(true);
    expect(isAvailabilityFailure({ kind: 'unknown', reason: 'server_error' })).toBe(true);
    expect(isAvailabilityFailure(decline)).toBe(false);
    expect(isAvailabilityFailure({ kind: 'not_sent', reason: 'validation' })).toBe(false);
    expect(isAvailabilityFailure({ kind: 'unknown', reason: 'idempotency_mismatch' })).toBe(false);
  });

  it('returns the outcome unchanged, whatever it is, while closed', async () => {
    breakers = new ConnectorBreakers({ a: settings });
    expect(await breakers.call('a', async () => timeout)).toEqual(timeout);
    expect(await breakers.call('a', async () => decline)).toEqual(decline);
  });

  it('declines never open the breaker', async () => {
    breakers = new ConnectorBreakers({ a: settings });
    for (let i = 0; i < 20; i++) await breakers.call('a', async () => decline);
    expect(breakers.state('a')).toBe('closed');
  });

  it('opens after the configured failures, short-circuits with not_sent{breaker_open} without calling, then recovers half-open', async () => {
    const lines: string[] = [];
    breakers = new ConnectorBreakers({ a: settings, b: settings }, (l) => lines.push(l));
    for (let i = 0; i < 4; i++) await breakers.call('a', async () => refused);
    expect(breakers.state('a')).toBe('open');
    expect(breakers.state('b')).toBe('closed');
    expect([...breakers.openAccounts()]).toEqual(['a']);
    let called = 0;
    const r = await breakers.call('a', async () => {
      called++;
      return ok;
    });
    expect(r).toMatchObject({ kind: 'not_sent', reason: 'breaker_open' });
    expect(called).toBe(0);
    await new Promise((res) => setTimeout(res, 250));
    expect(breakers.state('a')).toBe('half_open');
    expect(await breakers.call('a', async () => ok)).toEqual(ok);
    expect(breakers.state('a')).toBe('closed');
    expect(lines).toEqual(['breaker a: open', 'breaker a: half-open', 'breaker a: closed']);
  });

  it('a programming error inside the call is not swallowed', async () => {
    breakers = new ConnectorBreakers({ a: settings });
    await expect(breakers.call('a', () => Promise.reject(new TypeError('bug')))).rejects.toThrow('bug');
  });
});
