// Shared setup for the sandbox tests: a Stripe sandbox on an ephemeral port, the real stripe SDK
// pointed at it, and a small webhook receiver that records what arrives.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Stripe from 'stripe';
import { createConnector } from '../../../src/connectors/registry.ts';
import type { Connector } from '../../../src/connectors/contract.ts';
import { startStripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox, StripeSandboxOptions } from '../../../src/sandboxes/stripe/index.ts';
import { withOwnSandboxDatabase } from '../helpers/sandbox-db.ts';

export const SECRET_KEY = 'sk_test_switchyard_sandbox';
export const WEBHOOK_SECRET = 'whsec_switchyard_sandbox_secret';

/** Each sandbox on a sandbox database of its own (dropped when it closes): tests share no provider state. */
export async function startSandbox(options: Partial<Omit<StripeSandboxOptions, 'database'>> = {}): Promise<StripeSandbox> {
  return withOwnSandboxDatabase('sandbox', (database) => startStripeSandbox({ account: 'stripe_test', secretKey: SECRET_KEY, ...options, database }));
}

export function stripeFor(sandbox: StripeSandbox, config: Stripe.StripeConfig = {}, key = SECRET_KEY): Stripe {
  return new Stripe(key, { host: '127.0.0.1', port: sandbox.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false, ...config });
}

/** The gateway's own Stripe connector pointed at the sandbox (settings: what a test changes). */
export function stripeConnectorFor(sandbox: StripeSandbox, settings: Record<string, unknown> = {}): Connector {
  return createConnector('stripe_test', {
    type: 'stripe',
    sandbox: true,
    settings: { secretKey: SECRET_KEY, webhookSecrets: ['whsec_unused'], apiHost: sandbox.host, apiPort: sandbox.port, apiProtocol: 'http', timeoutMs: 5_000, ...settings },
  });
}

/** Awaits a promise that must reject, and returns the error. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

export interface ReceivedWebhook {
  readonly body: string;
  readonly signature: string;
  readonly at: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Statuses to answer, one per request, then 200. */
  answerWith(statuses: number[]): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let statuses: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(req.headers['stripe-signature']), at: Date.now() });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/stripe`,
    received,
    answerWith: (next) => {
      statuses = [...next];
    },
    waitFor: async (count, timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhooks, got ${received.length}`);
        await sleep(10);
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
