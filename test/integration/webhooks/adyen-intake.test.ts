// Adyen notifications with the official library's HMAC validator as the signer: a signed batch
// behind basic auth is acknowledged with "[accepted]" and stored item by item; one bad item
// rejects the whole batch and nothing of it is stored.
import adyen from '@adyen/api-library';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookGateway } from './helpers.ts';
import type { WebhookGateway } from './helpers.ts';

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const OTHER_KEY = 'AA782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA0FF';
const AUTH = `Basic ${Buffer.from('notify:s3cret').toString('base64')}`;
let gw: WebhookGateway;
const validator = new adyen.hmacValidator();

beforeAll(async () => {
  gw = await startWebhookGateway('wh_adyen_intake', `
connectors:
  adyen_a:
    type: adyen
    endpoint: "https://127.0.0.1:9"
    api_key: test_key
    merchant_account: TestMerchant
    hmac_keys: [${HMAC_KEY}]
    basic_auth: { username: notify, password: s3cret }
routing:
  default: { priority: [adyen_a] }
`);
});
afterAll(async () => gw?.close());

let n = 0;
function item(key: string, over: Record<string, unknown> = {}) {
  n++;
  const base = {
    amount: { value: 1000, currency: 'EUR' }, eventCode: 'AUTHORISATION', eventDate: new Date().toISOString(), merchantAccountCode: 'TestMerchant',
    merchantReference: `att_unknown${n}`, pspReference: `PSP${Date.now()}${n}`, success: 'true', ...over,
  };
  const hmacSignature = validator.calculateHmac(base as never, key);
  return { NotificationRequestItem: { ...base, additionalData: { hmacSignature } } };
}

async function post(items: unknown[], authorization = AUTH) {
  const res = await fetch(`${gw.url}/webhooks/adyen_a`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify({ live: 'false', notificationItems: items }),
  });
  return { status: res.status, body: await res.text() };
}

const stored = async (psp: string) => (await gw.db.db.execute<{ outcome: string }>(sql`SELECT outcome FROM inbound_events WHERE provider_event_id LIKE ${`%:${psp}:%`}`)).rows;
const pspOf = (i: ReturnType<typeof item>) => i.NotificationRequestItem.pspReference;

describe('Adyen intake', () => {
  it('accepts a signed batch behind basic auth with "[accepted]" and stores each item once', async () => {
    const batch = [item(HMAC_KEY), item(HMAC_KEY, { eventCode: 'REPORT_AVAILABLE' })];
    const res = await post(batch);
    expect(res).toEqual({ status: 200, body: '[accepted]' });
    expect(await stored(pspOf(batch[0]!))).toHaveLength(1);
    expect(await stored(pspOf(batch[1]!))).toEqual([{ outcome: 'ignored' }]);
    expect(await post(batch)).toEqual({ status: 200, body: '[accepted]' });
    expect(await stored(pspOf(batch[0]!))).toHaveLength(1);
  });

  it('one badly signed item rejects the whole batch: 401, nothing stored', async () => {
    const batch = [item(HMAC_KEY), item(OTHER_KEY), item(HMAC_KEY)];
    const res = await post(batch);
    expect(res.status).toBe(401);
    for (const i of batch) expect(await stored(pspOf(i))).toHaveLength(0);
  });

  it('a tampered item (amount changed after signing) rejects the batch', async () => {
    const good = item(HMAC_KEY);
    const tampered = { NotificationRequestItem: { ...good.NotificationRequestItem, amount: { value: 99999, currency: 'EUR' } } };
    expect((await post([item(HMAC_KEY), tampered])).status).toBe(401);
    expect(await stored(pspOf(good))).toHaveLength(0);
  });

  it('wrong basic auth is 401 even with valid signatures', async () => {
    const batch = [item(HMAC_KEY)];
    expect((await post(batch, `Basic ${Buffer.from('notify:wrong').toString('base64')}`)).status).toBe(401);
    expect(await stored(pspOf(batch[0]!))).toHaveLength(0);
  });
});
