// Failure and reversal events do not depend on arrival order (issue 20), against the Adyen sandbox
// with its own notifications off, so the test delivers signed notifications in the order it wants:
// an automatic-capture CAPTURE_FAILED (no capture record) is applied with its compensating posting;
// a REFUND_FAILED before the REFUND it reverses is held and applied once the refund succeeded;
// one whose success never comes is, past the hold bound (the gateway's clock, injected), a
// discrepancy with the event attached.
import adyen from '@adyen/api-library';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestRefund } from '../../../src/app/payment-service.ts';
import type { Payment } from '../../../src/core/payment.ts';
import type { SandboxControl } from '../../../src/sandboxes/shared/control.ts';
import { startWebhookGateway, until } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const AUTH = `Basic ${Buffer.from('notify:s3cret').toString('base64')}`;
const HOUR = 3_600_000;
const validator = new adyen.hmacValidator();
let gw: WebhookGateway;
let sb: SandboxControl;
let offsetMs = 0;

beforeAll(async () => {
  gw = await startWebhookGateway('wh_reordered', `
connectors:
  adyen_a:
    type: adyen
    endpoint: sandbox
    api_key: ak_reordered
    merchant_account: ReorderMerchant
    hmac_keys: [${HMAC_KEY}]
    basic_auth: { username: notify, password: s3cret }
    breaker: { volume_threshold: 50 }
routing:
  default: { priority: [adyen_a] }
`, { now: () => new Date(Date.now() + offsetMs), webhooks: { inboundRetryBaseMs: 50, inboundHoldRecheckMs: 200 } });
  sb = gw.rt.sandboxes[0]!;
  // The test delivers the notifications itself, in the order it chooses.
  await sb.configureWebhooks({ enabled: false });
});
afterAll(async () => gw?.close());

function item(p: Payment, over: Record<string, unknown>) {
  const a = p.attempts[0]!;
  const base = {
    amount: { value: 1000, currency: 'EUR' }, eventDate: new Date().toISOString(), merchantAccountCode: 'ReorderMerchant',
    merchantReference: a.id, originalReference: a.providerRef ?? '', success: 'true', ...over,
  };
  const hmacSignature = validator.calculateHmac(base as never, HMAC_KEY);
  return { NotificationRequestItem: { ...base, additionalData: { hmacSignature } } };
}

async function post(...items: unknown[]): Promise<void> {
  const res = await fetch(`${gw.url}/webhooks/adyen_a`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: AUTH }, body: JSON.stringify({ live: 'false', notificationItems: items }),
  });
  expect(res.status).toBe(200);
}

const inbound = async (psp: string, code: string) =>
  (await gw.db.db.execute<{ outcome: string; reason: string | null }>(sql`SELECT outcome, reason FROM inbound_events WHERE provider_event_id LIKE ${`${code}:${psp}:%`}`)).rows[0];

async function capturedPayment(): Promise<Payment> {
  const p = await gw.pay({ amount: 1000, currency: 'EUR', captureMethod: 'automatic' });
  return gw.waitFor(p.id, (x) => x.state === 'captured');
}

async function pendingRefund(p: Payment): Promise<{ p: Payment; psp: string }> {
  await requestRefund(gw.rt, gw.merchantId, p, 1000, null);
  const q = await gw.waitFor(p.id, (x) => x.refunds[0]?.status === 'pending' && x.refunds[0].providerRef !== null);
  return { p: q, psp: q.refunds[0]!.providerRef! };
}

describe('failure and reversal events in any order', () => {
  it('an automatic-capture CAPTURE_FAILED (no capture record) is applied, once, with its compensating posting', async () => {
    const p = await capturedPayment();
    expect(p.captures).toEqual([]);
    const failed = item(p, { eventCode: 'CAPTURE_FAILED', pspReference: 'CF_AUTO_1', reason: 'Capture Failed' });
    await post(failed);
    const after = await gw.waitFor(p.id, (x) => x.state === 'failed');
    expect(after.amountCaptured).toBe(0);
    expect(after.captures).toMatchObject([{ status: 'reversed', amount: 1000, providerRef: 'CF_AUTO_1' }]);
    const postings = await gw.db.db.execute<{ kind: string }>(sql`SELECT kind FROM ledger_transactions WHERE payment_id = ${p.id} ORDER BY created_at`);
    expect(postings.rows.map((r) => r.kind)).toEqual(['capture', 'capture_reversed']);
  });

  it('a REFUND_FAILED delivered before its REFUND is held, then applied as the reversal once the refund succeeded', async () => {
    const { p, psp } = await pendingRefund(await capturedPayment());
    await post(item(p, { eventCode: 'REFUND_FAILED', pspReference: psp, reason: 'Refund Failed' }));
    await until(() => inbound(psp, 'REFUND_FAILED'), (r) => r?.reason?.startsWith('held:') === true);
    expect((await gw.waitFor(p.id, () => true)).refunds[0]!.status).toBe('pending');
    await post(item(p, { eventCode: 'REFUND', pspReference: psp }));
    const after = await gw.waitFor(p.id, (x) => x.refunds[0]!.status === 'reversed');
    expect(after.amountRefunded).toBe(0);
    expect((await inbound(psp, 'REFUND_FAILED'))?.outcome).toBe('applied');
    // Twice (a redelivery with another event id would be deduplicated the same way): nothing more.
    await post(item(p, { eventCode: 'REFUND_FAILED', pspReference: psp, reason: 'Refund Failed' }));
    expect((await gw.waitFor(p.id, () => true)).version).toBe(after.version);
  });

  it('a reversal whose success never arrives is, past the hold bound, a discrepancy with the event attached', async () => {
    const { p, psp } = await pendingRefund(await capturedPayment());
    await post(item(p, { eventCode: 'REFUND_FAILED', pspReference: psp, reason: 'Refund Failed' }));
    await until(() => inbound(psp, 'REFUND_FAILED'), (r) => r?.reason?.startsWith('held:') === true);
    offsetMs += HOUR + 60_000;
    const row = await until(() => inbound(psp, 'REFUND_FAILED'), (r) => r?.outcome === 'failed', 15_000);
    expect(row?.reason).toContain('discrepancy');
    const d = await gw.db.db.execute<{ kind: string; category: string; event: Record<string, unknown> }>(sql`SELECT kind, category, event FROM discrepancies WHERE payment_id = ${p.id}`);
    expect(d.rows).toHaveLength(1);
    expect(d.rows[0]).toMatchObject({ kind: 'held_event_expired', category: 'unapplied_event', event: { kind: 'refund_reversed', modificationRef: psp, rawType: 'REFUND_FAILED' } });
  });
});
