// Failover only on proof, against the sandboxes: declines by the config's table, and breakers
// that open after the configured failures, short-circuit to the secondary, then recover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const CONFIG = `
connectors:
  stripe_a:
    type: stripe
    secret_key: sk_test_a
    webhook_secrets: [whsec_a]
    timeout_ms: 1500
    breaker: { volume_threshold: 3, error_threshold_pct: 25, reset_ms: 1500 }
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
routing:
  default: { priority: [stripe_a, stripe_b] }
  max_attempts: 3
declines:
  stripe:
    processing_error: { class: soft, retry_elsewhere: true }
    insufficient_funds: { class: soft, retry_elsewhere: false }
`;

let gw: TestGateway;
let a: SandboxControl;
let b: SandboxControl;
const live = async (sb: SandboxControl, attemptId: string) => (await sb.ledger()).filter((e) => e.reference === attemptId && e.authorized > 0 && !e.cancelled).length;

beforeAll(async () => {
  gw = await startTestGateway('routing_failover', CONFIG);
  a = gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
  b = gw.rt.sandboxes.find((s) => s.account === 'stripe_b')!;
});
afterAll(async () => gw?.close());

describe('failover by the decline table', () => {
  it('a soft decline marked retry-elsewhere is retried on the secondary as a new operation', async () => {
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { test_card: '4000000000000119' } })).id, settled);
    // The processing-error card declines on every sandbox; the second attempt is a new operation with a new key.
    expect(p.attempts.map((x) => [x.connector, x.proof, x.declineCode])).toEqual([
      ['stripe_a', 'declined', 'processing_error'],
      ['stripe_b', 'declined', 'processing_error'],
    ]);
    expect(p.state).toBe('declined');
  });

  it('a soft decline marked retry-elsewhere on the primary is authorized on the secondary (tokens per account)', async () => {
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { tokens: { stripe_a: 'pm_card_chargeDeclinedProcessingError', stripe_b: 'pm_card_visa' } } })).id, settled);
    expect(p.state).toBe('authorized');
    expect(p.attempts.map((x) => [x.connector, x.status, x.proof])).toEqual([['stripe_a', 'declined', 'declined'], ['stripe_b', 'authorized', null]]);
    expect((await live(a, p.attempts[0]!.id))).toBe(0);
    expect((await live(b, p.attempts[1]!.id))).toBe(1);
  });

  it('a soft decline not marked retry-elsewhere is declined without failover', async () => {
    const p = await gw.waitFor((await gw.pay({ paymentMethod: { test_card: '4000000000009995' } })).id, settled);
    expect(p.state).toBe('declined');
    expect(p.attempts).toHaveLength(1);
  });
});

describe('breakers', () => {
  it('open after the configured failures, short-circuit to the secondary, then recover', async () => {
    await a.outage(60);
    const first = await Promise.all([gw.pay(), gw.pay(), gw.pay()]);
    const failedOver = await Promise.all(first.map((p) => gw.waitFor(p.id, settled)));
    for (const p of failedOver) {
      expect(p.state).toBe('authorized');
      expect(p.attempts.map((x) => [x.connector, x.proof])).toEqual([['stripe_a', 'not_sent'], ['stripe_b', null]]);
      expect((await live(b, p.attempts[1]!.id))).toBe(1);
    }
    expect(gw.rt.breakers.state('stripe_a')).toBe('open');

    const shortCircuited = await gw.waitFor((await gw.pay()).id, settled);
    expect(shortCircuited.attempts.map((x) => x.connector)).toEqual(['stripe_b']);
    expect(shortCircuited.routing.skipped).toContainEqual({ connector: 'stripe_a', reason: 'breaker open' });

    await a.outage(0);
    await new Promise((r) => setTimeout(r, 1_700));
    expect(gw.rt.breakers.state('stripe_a')).toBe('half_open');
    const recovered = await gw.waitFor((await gw.pay()).id, settled);
    expect(recovered.attempts.map((x) => x.connector)).toEqual(['stripe_a']);
    expect(recovered.state).toBe('authorized');
    expect(gw.rt.breakers.state('stripe_a')).toBe('closed');
  });
});
