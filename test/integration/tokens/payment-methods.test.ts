// POST /v1/payment_methods with the secret key (merchants allowed raw cards only) and
// GET /v1/payment_methods/{id}. The idempotency record of the card-bearing request keeps an HMAC
// under a vault key, never a plain SHA-256 of the body, and the masked answer; a same-key resend
// replays it, another card under the same key is a 422.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalRequest, requestFingerprint } from '../../../src/api/idempotent-post.ts';
import { paymentMethodResource } from '../../../src/api/payment-method-schemas.ts';
import { setAllowRawCards } from '../../../src/store/merchants.ts';
import { newKey, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { CARD, gatewayTablesHolding, vaultRows } from './helpers.ts';

let api: ApiGateway;
let other: { id: string; apiKey: string; publishableKey: string };
beforeAll(async () => {
  api = await startApiGateway('tokens_payment_methods', { rateLimits: null });
  other = await api.newMerchant('not allowed');
  await setAllowRawCards(api.gw.rt.database.db, api.merchantId, true);
});
afterAll(async () => api?.close());

const records = async (key: string) => (await api.gw.db.pool.query<{ fingerprint: string; response_body: Buffer | null }>('SELECT fingerprint, response_body FROM idempotency_records WHERE key = $1', [key])).rows;

describe('POST /v1/payment_methods', () => {
  it('answers 403 raw_card_data_not_allowed to a merchant not allowed raw cards, before writing anything', async () => {
    const idem = newKey();
    const before = await vaultRows(api);
    const r = await api.call('POST', '/v1/payment_methods', { key: other.apiKey, idem, body: { card: CARD } });
    expect([r.status, r.json.code]).toEqual([403, 'raw_card_data_not_allowed']);
    expect(r.text).not.toContain(CARD.number);
    expect(await records(idem)).toEqual([]);
    expect(await vaultRows(api)).toBe(before);
    // Revoked is the same as never allowed.
    await setAllowRawCards(api.gw.rt.database.db, other.id, true);
    expect((await api.call('POST', '/v1/payment_methods', { key: other.apiKey, body: { card: CARD } })).status).toBe(201);
    await setAllowRawCards(api.gw.rt.database.db, other.id, false);
    expect((await api.call('POST', '/v1/payment_methods', { key: other.apiKey, body: { card: CARD } })).status).toBe(403);
  });

  it('stores the card for an allowed merchant; the record keeps a keyed digest and the masked answer; a resend replays it, another card is a 422', async () => {
    const idem = newKey();
    const body = { card: { ...CARD, holder_name: 'Grace Hopper' } };
    const created = await api.call('POST', '/v1/payment_methods', { idem, body });
    expect(created.status).toBe(201);
    const pm = paymentMethodResource.parse(created.json);
    expect(pm).toMatchObject({ id: expect.stringMatching(/^pmd_/) as unknown, card: { brand: 'visa', last4: '5556', exp_month: 12, exp_year: 2039 } });

    const [record] = await records(idem);
    // Not the plain SHA-256 the other POSTs keep (a PAN's hash is brute-forceable), but the vault's HMAC of the same text.
    expect(record!.fingerprint).not.toBe(requestFingerprint('POST', '/v1/payment_methods', body, 'test'));
    expect(record!.fingerprint).toBe(await api.gw.rt.vault.requestDigest(api.merchantId, canonicalRequest('POST', '/v1/payment_methods', body, 'test')));
    expect(record!.fingerprint).not.toBe(createHash('sha256').update(canonicalRequest('POST', '/v1/payment_methods', body, 'test')).digest('hex'));
    expect(record!.response_body!.toString('utf8')).toBe(created.text);

    const replay = await api.call('POST', '/v1/payment_methods', { idem, body });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.text]).toEqual([201, 'true', created.text]);
    const otherCard = await api.call('POST', '/v1/payment_methods', { idem, body: { card: { ...CARD, number: '4242424242424242' } } });
    expect([otherCard.status, otherCard.json.code]).toEqual([422, 'idempotency_key_reused']);
    const otherCode = await api.call('POST', '/v1/payment_methods', { idem, body: { card: { ...body.card, cvc: '738' } } });
    expect(otherCode.status).toBe(422);

    // The number and the code are in no table of the gateway's database, idempotency records included.
    expect(await gatewayTablesHolding(api, [CARD.number, '4242424242424242'])).toEqual([]);
    // The scan does find what is there: the key in the row, the payment method id in the stored answer's bytes.
    expect(await gatewayTablesHolding(api, [idem])).toEqual(['idempotency_records']);
    expect(await gatewayTablesHolding(api, [pm.id])).toEqual(['idempotency_records.response_body']);
  });

  it('refuses a bad card with a 400 naming the field; nothing stored, the key stays free', async () => {
    const idem = newKey();
    const before = await vaultRows(api);
    const bad = await api.call('POST', '/v1/payment_methods', { idem, body: { card: { ...CARD, exp_year: 2021 } } });
    expect([bad.status, bad.json.errors[0]?.path]).toEqual([400, 'card.exp_year']);
    const unknown = await api.call('POST', '/v1/payment_methods', { idem, body: { card: { ...CARD }, [CARD.number]: 1 } });
    expect([unknown.status, unknown.json.errors[0]?.path]).toEqual([400, '[card]']);
    expect(unknown.text).not.toContain(CARD.number);
    expect(await records(idem)).toEqual([]);
    expect(await vaultRows(api)).toBe(before);
    expect((await api.call('POST', '/v1/payment_methods', { idem, body: { card: CARD } })).status).toBe(201);
    expect((await api.call('POST', '/v1/payment_methods', { idem: null, body: { card: CARD } })).json.code).toBe('idempotency_key_missing');
  });
});

describe('GET /v1/payment_methods/{id}', () => {
  it('answers the masked resource to its merchant only', async () => {
    const pm = (await api.call('POST', '/v1/payment_methods', { body: { card: CARD } })).json;
    const read = await api.call('GET', `/v1/payment_methods/${pm.id}`);
    expect([read.status, read.json]).toEqual([200, pm]);
    const theirs = await api.call('GET', `/v1/payment_methods/${pm.id}`, { key: other.apiKey });
    expect([theirs.status, theirs.json.code]).toEqual([404, 'not_found']);
    expect((await api.call('GET', '/v1/payment_methods/pmd_01JZZZZZZZZZZZZZZZZZZZZZZZ')).status).toBe(404);
    const notAnId = await api.call('GET', `/v1/payment_methods/${CARD.number}`);
    expect(notAnId.status).toBe(404);
    expect(notAnId.text).not.toContain(CARD.number);
  });
});
