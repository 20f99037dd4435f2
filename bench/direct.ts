// The added-latency stage's other side: what a careful direct integration does, with the official
// `stripe` client against the same sandbox process (its own account, so its webhooks do not land
// in the gateway's intake): PaymentIntent create with confirm: true and an idempotency key (what
// the shopper waits for), then capture with its own key. Open loop, like the gateway's slices.

import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import Stripe from 'stripe';
import { openLoop } from './lib.ts';

export interface DirectSlice {
  readonly authMs: number[];
  readonly captureMs: number[];
  readonly requests: number;
  readonly errors: number;
  readonly firstError: string | null;
}

export interface DirectClient {
  readonly stripe: Stripe;
  close(): void;
}

export function directClient(port: number, secretKey: string): DirectClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const stripe = new Stripe(secretKey, {
    host: '127.0.0.1', port, protocol: 'http', httpClient: Stripe.createNodeHttpClient(agent),
    // The SDK's own retries reuse the idempotency key: safe, and what a careful integration keeps on.
    maxNetworkRetries: 2, timeout: 30_000, telemetry: false,
  });
  return { stripe, close: () => agent.destroy() };
}

export async function directSlice(client: DirectClient, ratePerS: number, seconds: number): Promise<DirectSlice> {
  const { stripe } = client;
  const authMs: number[] = [];
  const captureMs: number[] = [];
  const stats = await openLoop(ratePerS, seconds, async () => {
    const order = `bench-direct-${randomBytes(4).toString('hex')}`;
    let started = performance.now();
    const pi = await stripe.paymentIntents.create(
      {
        amount: 1000, currency: 'eur', capture_method: 'manual', confirm: true, payment_method: 'pm_card_visa',
        allowed_payment_method_types: ['card'], metadata: { order },
      },
      { idempotencyKey: `${order}-create` },
    );
    const auth = performance.now() - started;
    if (pi.status !== 'requires_capture') throw new Error(`direct create answered status ${pi.status}`);
    started = performance.now();
    const captured = await stripe.paymentIntents.capture(pi.id, {}, { idempotencyKey: `${order}-capture` });
    if (captured.status !== 'succeeded') throw new Error(`direct capture answered status ${captured.status}`);
    authMs.push(auth);
    captureMs.push(performance.now() - started);
    return auth;
  });
  return { authMs, captureMs, requests: stats.ok, errors: stats.errors, firstError: stats.firstError };
}
