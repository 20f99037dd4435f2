// A test gateway (own database, queue prefix, in-process Stripe sandboxes) with the merchant API
// on an ephemeral port, and a small fetch client.

import { randomBytes } from 'node:crypto';
import { createApiApp } from '../../../src/api/app.ts';
import type { ApiOptions } from '../../../src/api/app.ts';
import { listenApi } from '../../../src/api/server.ts';
import type { ApiServer } from '../../../src/api/server.ts';
import type { RuntimeOptions } from '../../../src/app/runtime.ts';
import { createMerchant } from '../../../src/store/merchants.ts';
import { startTestGateway, twoStripeConfig } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

/** A parsed answer, loosely typed: the fields tests read (the resource schemas check shapes). */
export interface Body {
  readonly [field: string]: unknown;
  readonly id: string;
  readonly status: string | number;
  readonly code: string;
  readonly errors: readonly { readonly path: string; readonly message: string }[];
  readonly data: readonly Body[];
  readonly attempts: readonly Body[];
  readonly amount_captured: number;
  readonly next_cursor: string | null;
  readonly checks: Readonly<Record<string, string>>;
}

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Body;
}

export interface CallOptions {
  readonly key?: string | null;
  /** Idempotency-Key; POSTs get a random one unless null or given. */
  readonly idem?: string | null;
  /** A raw body (string) is sent as is; anything else as JSON. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface ApiGateway {
  readonly gw: TestGateway;
  readonly server: ApiServer;
  readonly url: string;
  readonly apiKey: string;
  /** The first merchant's publishable key (pk_sy_…). */
  readonly publishableKey: string;
  readonly merchantId: string;
  readonly logs: string[];
  newMerchant(name?: string): Promise<{ id: string; apiKey: string; publishableKey: string }>;
  call(method: string, path: string, o?: CallOptions): Promise<ApiAnswer>;
  close(): Promise<void>;
}

export const CARD_OK = '4242424242424242';

export function paymentBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 5000, currency: 'EUR', reference: `order-${randomBytes(3).toString('hex')}`, capture_method: 'manual',
    payment_method: { type: 'card', test_card: CARD_OK }, ...over,
  };
}

export function newKey(): string {
  return `idem-${randomBytes(8).toString('hex')}`;
}

/** `intake`: the in-process sandboxes send their webhooks to this API's intake (`/webhooks/{account}`). */
export async function startApiGateway(name: string, opts: ApiOptions = {}, config = twoStripeConfig(), runtime: Partial<RuntimeOptions> = {}, intake = false): Promise<ApiGateway> {
  const logs: string[] = [];
  const server = await listenApi(0, '127.0.0.1');
  const gw = await startTestGateway(name, config, { log: (l) => logs.push(l), ...(intake ? { webhookBaseUrl: `http://127.0.0.1:${server.port}` } : {}), ...runtime });
  server.attach(createApiApp(gw.rt, { log: (l) => logs.push(l), ...opts }));
  const first = await createMerchant(gw.rt.database.db, { name: `api-${name}` });
  const url = `http://127.0.0.1:${server.port}`;

  async function call(method: string, path: string, o: CallOptions = {}): Promise<ApiAnswer> {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? first.apiKey : o.key;
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    if (method === 'POST' && o.idem !== null) headers['idempotency-key'] = o.idem ?? newKey();
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await res.text();
    let json = {} as Body;
    try {
      json = JSON.parse(text) as Body;
    } catch {
      // not JSON: tests look at text
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  return {
    gw, server, url, apiKey: first.apiKey, publishableKey: first.publishableKey, merchantId: first.merchant.id, logs,
    async newMerchant(n = 'other') {
      const m = await createMerchant(gw.rt.database.db, { name: n });
      return { id: m.merchant.id, apiKey: m.apiKey, publishableKey: m.publishableKey };
    },
    call,
    async close() {
      await server.close(1000);
      await gw.close();
    },
  };
}

/** Row counts of the tables a request could write. */
export async function rowCounts(gw: TestGateway): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['payments', 'payment_attempts', 'captures', 'refunds', 'payment_transitions', 'outbox', 'idempotency_records']) {
    const r = await gw.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`);
    out[t] = Number(r.rows[0]!.n);
  }
  return out;
}
