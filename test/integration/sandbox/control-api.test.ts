// The sandbox control API over HTTP: its own server, and the same router mounted in an express app.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlRouter, startControlServer } from '../../../src/sandboxes/shared/index.ts';
import type { ControlServer } from '../../../src/sandboxes/shared/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { rejectionOf, startSandbox, stripeFor } from './helpers.ts';

let sandbox: StripeSandbox;
let control: ControlServer;
let stripe: Stripe;

beforeAll(async () => {
  sandbox = await startSandbox({ account: 'stripe_eu' });
  control = await startControlServer({ port: 0, sandboxes: [sandbox] });
  stripe = stripeFor(sandbox);
});
afterAll(async () => {
  await control.close();
  await sandbox.close();
});

async function call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, base = control.url): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

describe('control API', () => {
  it('runs on its own port, not the provider listener', () => {
    expect(control.port).not.toBe(sandbox.port);
  });

  it('schedules faults that the next requests hit', async () => {
    expect(await call('POST', '/_sandbox/stripe_eu/faults', { op: 'create', mode: 'error_503', count: 2 })).toMatchObject({ status: 200, json: { scheduled: 2 } });
    for (let i = 0; i < 2; i++) expect(await rejectionOf(stripe.paymentIntents.create({ amount: 100, currency: 'usd' }))).toMatchObject({ statusCode: 503 });
    expect((await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).object).toBe('payment_intent');
    const latency = await call('POST', '/_sandbox/stripe_eu/faults', { op: 'capture', mode: 'latency', count: 1, latency_ms: 10, process: 'after' });
    expect(latency).toMatchObject({ status: 200, json: { scheduled: 1 } });
  });

  it('DELETE faults clears the queued faults and says how many firings were pending', async () => {
    expect(await call('DELETE', '/_sandbox/stripe_eu/faults')).toMatchObject({ status: 200, json: { cleared: 1 } }); // the capture latency fault above
    await call('POST', '/_sandbox/stripe_eu/faults', { op: 'create', mode: 'error_503', count: 3 });
    await call('POST', '/_sandbox/stripe_eu/faults', { op: 'refund', mode: 'reset_before_processing', count: 1 });
    expect(await call('DELETE', '/_sandbox/stripe_eu/faults')).toMatchObject({ status: 200, json: { cleared: 4 } });
    expect((await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).object).toBe('payment_intent');
    expect(await call('DELETE', '/_sandbox/stripe_eu/faults')).toMatchObject({ status: 200, json: { cleared: 0 } });
    expect(await call('DELETE', '/_sandbox/nobody/faults')).toMatchObject({ status: 404, json: { error: { field: 'account' } } });
  });

  it.each([
    [{ op: 'teleport', mode: 'error_503', count: 1 }, 'op'],
    [{ op: 'create', mode: 'explode', count: 1 }, 'mode'],
    [{ op: 'create', mode: 'error_503', count: 0 }, 'count'],
    [{ op: 'create', mode: 'error_503', count: 1.5 }, 'count'],
    [{ op: 'create', mode: 'latency', count: 1 }, 'latency_ms'],
    [{ op: 'create', mode: 'latency', count: 1, latency_ms: 5, process: 'during' }, 'process'],
    [{ op: 'create', mode: 'error_503', count: 1, colour: 'red' }, 'colour'],
  ])('rejects fault body %j naming %s', async (body, field) => {
    const res = await call('POST', '/_sandbox/stripe_eu/faults', body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: { field } });
  });

  it('rejects malformed JSON and unknown accounts', async () => {
    expect((await call('POST', '/_sandbox/stripe_eu/faults', '{"op":')).status).toBe(400);
    expect(await call('GET', '/_sandbox/nobody/ledger')).toMatchObject({ status: 404, json: { error: { field: 'account' } } });
    expect((await call('POST', '/_sandbox/nobody/outage', { seconds: 1 })).status).toBe(404);
  });

  it('serves the ledger', async () => {
    const pi = await stripe.paymentIntents.create({
      amount: 2500, currency: 'eur', capture_method: 'manual', confirm: true, payment_method: 'pm_card_visa', metadata: { attempt_id: 'att_ctl', payment_id: 'pay_ctl' },
    });
    const res = await call('GET', '/_sandbox/stripe_eu/ledger');
    expect(res.status).toBe(200);
    const { payments } = res.json as { payments: unknown[] };
    expect(payments).toContainEqual({
      id: pi.id, reference: 'att_ctl', payment_id: 'pay_ctl', status: 'requires_capture', amount: 2500, currency: 'eur',
      authorized: 2500, captured: 0, refunded: 0, cancelled: false, created_at: new Date(pi.created * 1000).toISOString(),
      received: { currency: 'eur', decimals: 2, amount: 2500, authorized: 2500, captured: 0, refunded: 0 },
    });
  });

  it('starts and ends an outage', async () => {
    expect((await call('POST', '/_sandbox/stripe_eu/outage', { seconds: 30 })).status).toBe(200);
    const err = await rejectionOf(stripe.paymentIntents.create({ amount: 100, currency: 'usd' }));
    expect((err as Stripe.errors.StripeConnectionError).detail).toMatchObject({ code: 'ECONNREFUSED' });
    expect((await call('POST', '/_sandbox/stripe_eu/outage', { seconds: 0 })).status).toBe(200);
    expect((await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).object).toBe('payment_intent');
    expect(await call('POST', '/_sandbox/stripe_eu/outage', { seconds: -1 })).toMatchObject({ status: 400, json: { error: { field: 'seconds' } } });
  });

  it('configures webhooks and validates the settings', async () => {
    expect((await call('POST', '/_sandbox/stripe_eu/webhooks', { enabled: true, duplicate: 0.5, reorder: false, delay_ms: 0 })).status).toBe(200);
    expect(await call('POST', '/_sandbox/stripe_eu/webhooks', { duplicate: 2 })).toMatchObject({ status: 400, json: { error: { field: 'duplicate' } } });
    expect(await call('POST', '/_sandbox/stripe_eu/webhooks', { delay_ms: 'soon' })).toMatchObject({ status: 400, json: { error: { field: 'delay_ms' } } });
  });

  it('announces reports only for providers that have them', async () => {
    expect(await call('POST', '/_sandbox/stripe_eu/reports/announce', {})).toMatchObject({ status: 404, json: { error: { message: 'sandbox stripe_eu (stripe) announces no reports' } } });
    expect(await call('POST', '/_sandbox/stripe_eu/reports/announce', { except: 'x' })).toMatchObject({ status: 400, json: { error: { field: 'except' } } });
  });

  it('configures what a technical cancel does to an authorization in flight only for providers that cancel by merchant reference', async () => {
    expect(await call('POST', '/_sandbox/stripe_eu/technical-cancel', { in_flight: 'authorised' })).toMatchObject({ status: 404, json: { error: { message: 'sandbox stripe_eu (stripe) has no cancel by merchant reference' } } });
    expect(await call('POST', '/_sandbox/stripe_eu/technical-cancel', { in_flight: 'maybe' })).toMatchObject({ status: 400, json: { error: { field: 'in_flight' } } });
  });

  it('advances the sandbox clock', async () => {
    const before = (await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).created;
    expect((await call('POST', '/_sandbox/stripe_eu/clock', { advance_s: 3600 })).status).toBe(200);
    const after = (await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).created;
    expect(after - before).toBeGreaterThanOrEqual(3600);
    expect(await call('POST', '/_sandbox/stripe_eu/clock', {})).toMatchObject({ status: 400, json: { error: { field: 'advance_s' } } });
  });

  it('counts the requests the provider listener took', async () => {
    const before = (await call('GET', '/_sandbox/stripe_eu/requests')).json as { requests_received: number };
    await stripe.paymentIntents.create({ amount: 1000, currency: 'eur', payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
    await stripe.paymentIntents.list({ limit: 1 }).catch(() => undefined);
    const after = (await call('GET', '/_sandbox/stripe_eu/requests')).json as { requests_received: number };
    expect(after.requests_received - before.requests_received).toBe(2);
  });

  it('answers 404 for ca.pem when the sandbox serves no certificate', async () => {
    expect((await call('GET', '/_sandbox/stripe_eu/ca.pem')).status).toBe(404);
  });

  it('serves the same API from the router mounted in another express app', async () => {
    const app = express();
    app.use(createControlRouter([sandbox]));
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await call('POST', '/_sandbox/stripe_eu/faults', { op: 'refund', mode: 'error_503' }, base)).toMatchObject({ status: 200, json: { scheduled: 1 } });
      expect((await call('GET', '/_sandbox/stripe_eu/ledger', undefined, base)).status).toBe(200);
      expect((await call('POST', '/_sandbox/stripe_eu/faults', { op: 'x' }, base)).status).toBe(400);
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});
