// The shipped config runs as is: both in-process sandboxes start, and payments authorize on each
// connector the rules pick (EUR >= 1000.00 goes to Adyen first, the rest to Stripe).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway('jobs_default_config', readFileSync('config/switchyard.yaml', 'utf8'));
});
afterAll(async () => gw?.close());

describe('default config', () => {
  it('authorizes on Adyen for a large EUR payment and on Stripe otherwise', async () => {
    const large = await gw.waitFor((await gw.pay({ amount: 150_000 })).id, settled);
    expect(large.routing.rule).toBe('eur-large');
    expect(large.attempts.map((a) => [a.connector, a.status])).toEqual([['adyen_eu', 'authorized']]);
    expect(large.attempts[0]!.providerRef).not.toBeNull();
    const small = await gw.waitFor((await gw.pay({ amount: 1_000 })).id, settled);
    expect(small.attempts.map((a) => [a.connector, a.status])).toEqual([['stripe_eu', 'authorized']]);
  });

  it('Adyen in outage: fails over to Stripe with proof not_sent', async () => {
    const adyen = gw.rt.sandboxes.find((s) => s.account === 'adyen_eu')!;
    await adyen.outage(30);
    try {
      const p = await gw.waitFor((await gw.pay({ amount: 200_000 })).id, settled);
      expect(p.attempts.map((a) => [a.connector, a.proof])).toEqual([['adyen_eu', 'not_sent'], ['stripe_eu', null]]);
      expect(p.state).toBe('authorized');
    } finally {
      await adyen.outage(0);
    }
  });

  it('Adyen accept_then_drop: same-key replay finds the authorization; one live authorization', async () => {
    const adyen = gw.rt.sandboxes.find((s) => s.account === 'adyen_eu')!;
    await adyen.scheduleFault({ op: 'authorize', mode: 'accept_then_drop', count: 1 });
    const p = await gw.waitFor((await gw.pay({ amount: 300_000 })).id, settled, 30_000);
    expect(p.state).toBe('authorized');
    expect(p.attempts.map((a) => a.connector)).toEqual(['adyen_eu']);
    expect(p.attempts[0]!.sends).toBe(2);
    expect((await adyen.ledger()).filter((e) => e.reference === p.attempts[0]!.id && e.authorized > 0)).toHaveLength(1);
  });
});
