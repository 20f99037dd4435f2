// Stage 5, webhook intake: signed Stripe events (about 2.6 kB, each with its own event id) posted
// with 50 keep-alive connections, against the gateway's intake and a bare express endpoint.

import { createHmac, randomBytes } from 'node:crypto';
import { closedLoop, HttpClient, percentile } from './lib.ts';

export const BENCH_STRIPE_SECRET = 'whsec_sandbox';

/** A payment the gateway knows (its Stripe PaymentIntent), so an event about it is applied, not retried as "not known yet". */
export interface KnownIntent {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly providerRef: string;
}

function stripeEvent(known?: KnownIntent): string {
  const pi = known?.providerRef ?? `pi_bench${randomBytes(8).toString('hex')}`;
  const event = {
    id: `evt_bench${randomBytes(10).toString('hex')}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: pi, object: 'payment_intent', amount: 1000, amount_capturable: 1000, amount_received: 0, capture_method: 'manual', confirmation_method: 'automatic',
        client_secret: `${pi}_secret_${randomBytes(12).toString('hex')}`, created: Math.floor(Date.now() / 1000), currency: 'eur', customer: null,
        description: 'switchyard bench payment intent, padded to the size of a real event with charges and metadata',
        latest_charge: `ch_bench${randomBytes(8).toString('hex')}`, livemode: false,
        metadata: {
          switchyard_attempt: known?.attemptId ?? `att_bench${randomBytes(6).toString('hex')}`,
          switchyard_payment: known?.paymentId ?? `pay_bench${randomBytes(6).toString('hex')}`,
        },
        payment_method: `pm_bench${randomBytes(8).toString('hex')}`, payment_method_types: ['card'],
        payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
        status: 'requires_capture', last_payment_error: null, next_action: null, shipping: null, statement_descriptor: null,
      },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${randomBytes(8).toString('hex')}`, idempotency_key: randomBytes(16).toString('hex') },
    type: 'payment_intent.amount_capturable_updated',
  };
  return JSON.stringify(event, null, 2).padEnd(2_600, ' ');
}

function signed(body: string): Record<string, string> {
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac('sha256', BENCH_STRIPE_SECRET).update(`${t}.${body}`, 'utf8').digest('hex');
  return { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', 'stripe-signature': `t=${t},v1=${v1}` };
}

export interface IntakeResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  readonly errors: number;
  readonly firstError: string | null;
}

/** Posts signed events to `/webhooks/<account>` on `port` for `seconds` with `connections` connections. */
export async function intake(port: number, account: string, connections: number, seconds: number, known: readonly KnownIntent[] = []): Promise<IntakeResult> {
  return (await intakeSideBySide(port, null, account, connections, seconds, known)).gateway;
}

/**
 * The gateway's intake and the bare endpoint, measured in alternating slices (4 each, `seconds`
 * in total per side) so that load from other processes on the machine hits both alike.
 */
export async function intakeSideBySide(
  gatewayPort: number, barePort: number | null, account: string, connections: number, seconds: number, known: readonly KnownIntent[] = [],
): Promise<{ gateway: IntakeResult; bare: IntakeResult }> {
  // Pre-built bodies: the driver's own JSON and HMAC work should not eat the server's CPU share.
  const about = (i: number): KnownIntent | undefined => (known.length === 0 ? undefined : known[i % known.length]);
  const bodies = Array.from({ length: 2_000 }, (_, i) => stripeEvent(about(i)));
  let n = 0;
  const side = (port: number) => {
    const http = new HttpClient(port, connections);
    const post = async (): Promise<number | null> => {
      const body = n < bodies.length ? bodies[n]! : stripeEvent(about(n));
      n++;
      const r = await http.send('POST', `/webhooks/${account}`, signed(body), body);
      if (r.status !== 200) throw new Error(`intake answered ${r.status}: ${r.body.slice(0, 200)}`);
      return r.ms;
    };
    return { http, post, latencies: [] as number[], ok: 0, errors: 0, seconds: 0, firstError: null as string | null };
  };
  const sides = [side(gatewayPort), ...(barePort === null ? [] : [side(barePort)])];
  try {
    for (const s of sides) await closedLoop(connections, Math.min(1, seconds / 2), s.post); // warm-up: connections, JIT
    const slices = barePort === null ? 1 : 4;
    for (let k = 0; k < slices; k++) {
      for (const s of sides) {
        const stats = await closedLoop(connections, seconds / slices, s.post);
        s.latencies.push(...stats.latencies);
        s.ok += stats.ok;
        s.errors += stats.errors;
        s.seconds += stats.seconds;
        s.firstError ??= stats.firstError;
      }
    }
    const result = (s: (typeof sides)[number]): IntakeResult => ({
      rps: s.ok / s.seconds, p50Ms: percentile(s.latencies, 50), p99Ms: percentile(s.latencies, 99), requests: s.ok, errors: s.errors, firstError: s.firstError,
    });
    return { gateway: result(sides[0]!), bare: barePort === null ? result(sides[0]!) : result(sides[1]!) };
  } finally {
    for (const s of sides) s.http.close();
  }
}
