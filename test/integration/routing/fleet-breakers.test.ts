// Breakers when every process calls providers (dispatch at commit): a process that has not called a
// connector lately routes by the fleet's view (src/routing/fleet-breakers.ts). Two processes on one
// database and Redis prefix: the first finds stripe_a down and opens its breaker; the second, whose
// own breaker never saw a failure, skips stripe_a too; once stripe_a is back and the first
// process's breaker closes, the second routes to it again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import { startPayment, waitForPayment } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { REDIS_URL, settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const CONFIG = `
connectors:
  stripe_a:
    type: stripe
    secret_key: sk_test_a
    webhook_secrets: [whsec_a]
    timeout_ms: 1500
    breaker: { volume_threshold: 3, error_threshold_pct: 25, reset_ms: 6000 }
  stripe_b:
    type: stripe
    secret_key: sk_test_b
    webhook_secrets: [whsec_b]
    timeout_ms: 1500
routing:
  default: { priority: [stripe_a, stripe_b] }
  max_attempts: 3
`;

let first: TestGateway;
let second: Runtime;
let merchant: string;
let a: SandboxControl;
beforeAll(async () => {
  first = await startTestGateway('routing_fleet_breakers', CONFIG, { role: 'all' });
  second = await startRuntime({ role: 'api', databaseUrl: first.db.url, redisUrl: REDIS_URL, configFile: first.rt.config.file, queuePrefix: first.prefix, log: () => undefined, reconcileSchedule: false });
  merchant = (await createMerchant(second.database.db, { name: 'second' })).merchant.id;
  a = first.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => {
  await second?.stop();
  await first?.close();
});

async function payOnSecond(): Promise<Payment> {
  const r = await startPayment(second, merchant, { amount: 1000, currency: 'EUR', reference: `fleet-${Date.now()}`, captureMethod: 'manual', allowPartialAuthorization: false, paymentMethod: { test_card: '4242424242424242' }, metadata: {} });
  if (!r.ok) throw new Error(r.message);
  return (await waitForPayment(second, merchant, r.payment.id, settled, 15_000))!;
}

describe('breakers across processes', () => {
  it("a process that never saw the failures routes around an account the fleet's breakers opened, and back once it recovers", async () => {
    await a.outage(60);
    const failed = await Promise.all([first.pay(), first.pay(), first.pay()]);
    for (const p of failed) expect((await first.waitFor(p.id, settled)).state).toBe('authorized');
    expect(first.rt.breakers.state('stripe_a')).toBe('open');
    expect(second.breakers.state('stripe_a')).toBe('closed');
    // The board is published at once on the state change and read every second.
    await new Promise((r) => setTimeout(r, 1_300));
    const routed = await payOnSecond();
    expect(routed.attempts.map((x) => x.connector)).toEqual(['stripe_b']);
    expect(routed.routing.skipped).toContainEqual({ connector: 'stripe_a', reason: 'breaker open' });
    expect(second.breakers.state('stripe_a')).toBe('closed'); // its own breaker still saw nothing

    // Back: the first process's breaker half-opens after reset_ms and closes on its next success.
    await a.outage(0);
    // reset_ms is 6 s, not less: on a loaded machine the three failed payments took long enough
    // that the breaker had half-opened before the second process's payment (seen in .ci/run).
    await new Promise((r) => setTimeout(r, 6_200));
    expect((await first.waitFor((await first.pay()).id, settled)).attempts.map((x) => x.connector)).toEqual(['stripe_a']);
    expect(first.rt.breakers.state('stripe_a')).toBe('closed');
    await new Promise((r) => setTimeout(r, 1_300));
    expect((await payOnSecond()).attempts.map((x) => x.connector)).toEqual(['stripe_a']);
  }, 60_000);
});
