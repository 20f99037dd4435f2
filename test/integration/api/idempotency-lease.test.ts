// The "409 for 60 s" livelock: executions that outlast the idempotency lease while the merchant
// retries with the same key. Each retry took the record over once the lease expired; the first
// execution's finished answer was thrown away (its lease was gone), and so was every later one's.
// Now a finished answer is stored while the record is in progress for the same request and payment,
// so one payment, one stored answer, and every later retry replays it. Real PostgreSQL, Redis,
// worker and Stripe sandbox. The provider is slow (2 s per call, two calls), each request waits
// 800 ms for the outcome and the lease is 300 ms: every execution outlasts its lease.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';
import { newKey, paymentBody, startApiGateway } from './helpers.ts';
import type { ApiAnswer, ApiGateway } from './helpers.ts';

let api: ApiGateway;
let sandbox: SandboxControl;

beforeAll(async () => {
  // The client timeout is above the provider's latency: slow, not lost.
  api = await startApiGateway('api_idem_lease', { idempotencyLeaseMs: 300, authorizationWaitMs: 800 }, twoStripeConfig().replaceAll('timeout_ms: 1500', 'timeout_ms: 5000'));
  sandbox = api.gw.rt.sandboxes.find((s) => s.account === 'stripe_a')!;
});
afterAll(async () => api?.close());

interface Seen extends ApiAnswer {
  readonly at: number;
  readonly replayed: boolean;
}

describe('idempotency lease shorter than the execution', () => {
  it('a slow provider under same-key retries: one payment, one stored answer, every later retry replays it', async () => {
    // Both calls of the Stripe authorize (create, confirm) take 2 s: the payment is authorizing for about 4 s.
    await sandbox.scheduleFault({ op: 'any', mode: 'latency', latencyMs: 2_000, process: 'after', count: 2 });
    const idem = newKey();
    const body = paymentBody();
    const start = Date.now();
    const post = async (): Promise<Seen> => {
      const a = await api.call('POST', '/v1/payments', { idem, body });
      return { ...a, at: Date.now() - start, replayed: a.headers.get('idempotent-replayed') === 'true' };
    };
    const first = post();
    const pending: Promise<Seen>[] = [];
    await new Promise((r) => setTimeout(r, 400));
    // A merchant whose HTTP client gives up early: a retry with the same key every 150 ms, while the
    // earlier ones are still running at the gateway (each takes the record over once the lease ends).
    while (Date.now() - start < 3_500) {
      pending.push(post());
      await new Promise((r) => setTimeout(r, 150));
    }
    const retries = (await Promise.all(pending)).sort((x, y) => x.at - y.at);
    const answers = [await first, ...retries];

    const payments = await api.gw.db.pool.query<{ id: string }>('SELECT id FROM payments WHERE reference = $1', [body['reference']]);
    expect(payments.rows).toHaveLength(1);
    const rec = await api.gw.db.pool.query<{ status: string; response_status: number }>('SELECT status, response_status FROM idempotency_records WHERE key = $1', [idem]);
    expect(rec.rows[0]).toMatchObject({ status: 'completed' });
    expect(rec.rows[0]!.response_status).toBeLessThan(500);

    // Every final answer is the first one, byte for byte; none is a 5xx.
    const finals = answers.filter((a) => a.status !== 409);
    expect(finals.length).toBeGreaterThan(0);
    for (const a of finals) {
      expect(a.status).toBe(finals[0]!.status);
      expect(a.text).toBe(finals[0]!.text);
    }
    // Once an answer was stored the retries replay it: a replay came while the provider was still
    // working (the first execution answered after its 800 ms wait), and no 409 answered after it.
    const firstReplay = retries.find((a) => a.replayed);
    expect(firstReplay).toBeDefined();
    expect(firstReplay!.at).toBeLessThan(2_500);
    expect(retries.filter((a) => a.at > firstReplay!.at && a.status === 409)).toHaveLength(0);
    const late = await post();
    expect(late.replayed).toBe(true);
    expect(late.text).toBe(finals[0]!.text);
  });
});
