// Disputes the merchant can act on (issue 48), end to end through the HTTP API on both connectors:
// the shipped config with the in-process Stripe and Adyen sandboxes behind a real API listener. Per
// connector: a captured payment, a chargeback opened through the sandbox control API, the dispute
// listed and read, a PDF uploaded, the defense options read, evidence submitted (files sent to the
// provider with the official SDK, the defense at Adyen), the issuer's decision through the
// control API told back by the provider's own events (won at Stripe, lost at Adyen); another
// dispute accepted and lost by the provider's events. Refusals: a file too big or not a PDF, JPEG
// or PNG by its content, an unknown defense reason, field or document type, each a 400 naming it,
// with nothing written and nothing sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disputeList, disputeResource, defenseReasonsResource, fileResource } from '../../../src/api/dispute-schemas.ts';
import { problemResource } from '../../../src/api/resource-schemas.ts';
import { rotateMerchantKey } from '../../../src/store/merchants.ts';
import type { ShippedGateway } from '../helpers/shipped-gateway.ts';
import { startShippedGateway } from '../helpers/shipped-gateway.ts';
import { until } from '../helpers/until.ts';

let shipped: ShippedGateway;
let base: string;
let apiKey: string;
let keyNo = 0;

beforeAll(async () => {
  shipped = await startShippedGateway('api_disputes', { webhooks: { inboundRetryBaseMs: 100, inboundHoldRecheckMs: 300 } });
  base = `http://127.0.0.1:${shipped.server.port}`;
  const key = await rotateMerchantKey(shipped.gw.rt.database.db, shipped.gw.merchantId);
  if (key === null) throw new Error('no merchant to key');
  apiKey = key;
}, 60_000);
afterAll(async () => {
  await shipped?.close();
});

const auth = () => ({ authorization: `Bearer ${apiKey}` });
async function api(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = { ...auth() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = key ?? `k-${++keyNo}-${Date.now()}`;
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, headers: res.headers };
}
async function control(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}/_sandbox${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
async function upload(bytes: Uint8Array, declared: string, key = `f-${++keyNo}-${Date.now()}`): Promise<{ status: number; json: Record<string, unknown> }> {
  const form = new FormData();
  form.set('purpose', 'dispute_evidence');
  form.set('file', new Blob([bytes], { type: declared }), 'evidence.pdf');
  const res = await fetch(`${base}/v1/files`, { method: 'POST', headers: { ...auth(), 'idempotency-key': key }, body: form });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
const count = async (table: string): Promise<number> => Number((await shipped.gw.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

/** A small well-formed PDF. */
const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');

/** A captured payment through the API (EUR 50.00 routes to Stripe, EUR 1,500.00 and more to Adyen), and its provider reference. */
async function capturedPayment(amount: number): Promise<{ id: string; ref: string; connector: string }> {
  const created = await api('POST', '/v1/payments', { amount, currency: 'EUR', reference: `order-${++keyNo}`, capture_method: 'automatic', payment_method: { type: 'card', test_card: '4242424242424242' } });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const p = await until(() => api('GET', `/v1/payments/${String(created.json['id'])}`), (r) => r.json['status'] === 'captured', 'captured');
  const attempt = (p.json['attempts'] as { status: string; provider_reference: string; connector: string }[]).find((a) => a.provider_reference !== null)!;
  return { id: String(p.json['id']), ref: attempt.provider_reference, connector: attempt.connector };
}

/** Opens a chargeback through the control API and waits for the gateway to list it (its events in). */
async function openDispute(account: string, paymentRef: string, paymentId: string): Promise<Record<string, unknown>> {
  const opened = await control(`/${account}/disputes`, { payment: paymentRef });
  expect(opened.status, JSON.stringify(opened.json)).toBe(201);
  const listed = await until(() => api('GET', '/v1/disputes?limit=100'), (r) => (r.json['data'] as { payment_id: string; status: string }[]).some((d) => d.payment_id === paymentId && d.status === 'funds_withdrawn'), `dispute on ${paymentId}`);
  expect(disputeList.parse(listed.json).object).toBe('list');
  const d = (listed.json['data'] as Record<string, unknown>[]).find((x) => x['payment_id'] === paymentId)!;
  expect(d['provider_reference']).toBe(opened.json['dispute']);
  return d;
}
const disputeNow = (id: string) => api('GET', `/v1/disputes/${id}`).then((r) => r.json);
const waitStatus = (id: string, status: string) => until(() => disputeNow(id), (d) => d['status'] === status, `dispute ${id} ${status}`);

describe('files', () => {
  it('takes a PDF (its type read from the bytes) and answers its metadata; GET /v1/files/{id} reads it back; the same key replays', async () => {
    const key = `file-${Date.now()}`;
    const up = await upload(PDF, 'application/pdf', key);
    expect(up.status, JSON.stringify(up.json)).toBe(201);
    const file = fileResource.parse(up.json);
    expect([file.object, file.purpose, file.type, file.size, file.id.startsWith('file_')]).toEqual(['file', 'dispute_evidence', 'pdf', PDF.length, true]);
    expect((await api('GET', `/v1/files/${file.id}`)).json).toEqual(up.json);
    const again = await upload(PDF, 'application/pdf', key);
    expect([again.status, again.json['id']]).toEqual([201, file.id]);
  });

  it('refuses a file over 4 MB and one that is not a PDF, JPEG or PNG by content (whatever it declares), writing nothing', async () => {
    const before = await count('files');
    const big = new Uint8Array(4 * 1024 * 1024 + 1);
    big.set(PDF.subarray(0, 9));
    const tooBig = await upload(big, 'application/pdf');
    expect([tooBig.status, problemResource.parse(tooBig.json).code, (tooBig.json['errors'] as { path: string }[])[0]!.path]).toEqual([400, 'validation_error', 'file']);
    expect(String(tooBig.json['detail'])).toContain('4 MB');
    const text = await upload(new TextEncoder().encode('not a pdf at all, just text'), 'application/pdf');
    expect([text.status, (text.json['errors'] as { path: string }[])[0]!.path]).toEqual([400, 'file']);
    expect(String(text.json['detail'])).toContain('not a PDF, JPEG or PNG');
    const gif = await upload(new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0, 0, 0, 0x3b]), 'image/png');
    expect([gif.status, String(gif.json['detail'])]).toEqual([400, expect.stringContaining('image/gif')]);
    expect(await count('files')).toBe(before);
  });
});

describe('Stripe', () => {
  it('a chargeback: listed and read, defense options, a bad field refused, evidence with a receipt submitted, then won by Stripe\'s events', async () => {
    const p = await capturedPayment(5_000);
    expect(p.connector).toBe('stripe_eu');
    const listed = await openDispute('stripe_eu', p.ref, p.id);
    const d = disputeResource.parse(await disputeNow(String(listed['id'])));
    expect([d.object, d.amount, d.currency, d.withdrawn, d.reason, d.connector, d.evidence.submitted_at]).toEqual(['dispute', 5_000, 'EUR', 5_000, 'fraudulent', 'stripe_eu', null]);
    expect(Date.parse(d.evidence_due_by ?? '') - Date.parse(d.created_at)).toBeGreaterThan(20 * 86_400_000);

    const options = defenseReasonsResource.parse((await api('GET', `/v1/disputes/${d.id}/defense_reasons`)).json);
    expect([options.connector_type, options.reasons, options.fields.includes('uncategorized_text'), options.file_types.includes('receipt')]).toEqual(['stripe', [], true, true]);

    const file = fileResource.parse((await upload(PDF, 'application/pdf')).json);
    // Refused before anything is sent: an unknown field, a reason Stripe has none of, an unknown file type, another merchant's (no) file.
    for (const [body, path] of [
      [{ fields: { favourite_colour: 'blue' }, submit: true }, 'fields.favourite_colour'],
      [{ defense_reason: 'GoodsOrServicesProvided', submit: true }, 'defense_reason'],
      [{ files: [{ file: file.id, type: 'TIDorInvoice' }], submit: true }, 'files.0.type'],
      [{ files: [{ file: 'file_00000000000000000000000000', type: 'receipt' }], submit: true }, 'files.0.file'],
    ] as const) {
      const r = await api('POST', `/v1/disputes/${d.id}/evidence`, body);
      expect([r.status, (r.json['errors'] as { path: string }[] | undefined)?.[0]?.path], JSON.stringify(r.json)).toEqual([400, path]);
    }
    expect(disputeResource.parse(await disputeNow(d.id)).evidence.sent_at).toBeNull();

    const key = `evidence-${d.id}`;
    const body = { fields: { customer_name: 'Ada Lovelace', product_description: 'A difference engine', uncategorized_text: 'Delivered and signed for' }, files: [{ file: file.id, type: 'receipt' }], submit: true };
    const sent = await api('POST', `/v1/disputes/${d.id}/evidence`, body, key);
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    expect(disputeResource.parse(sent.json).evidence.submitted_at).not.toBeNull();
    const replay = await api('POST', `/v1/disputes/${d.id}/evidence`, body, key);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.json]).toEqual([200, 'true', sent.json]);
    // At Stripe: the file uploaded through its Files API and named by the evidence, submitted once.
    const atStripe = (await (await fetch(`${shipped.stripe.url}/v1/disputes/${d.provider_reference}`, { headers: { authorization: 'Bearer sk_test_sandbox' } })).json()) as { status: string; evidence: Record<string, string | null>; evidence_details: { submission_count: number } };
    expect([atStripe.status, atStripe.evidence['receipt']?.startsWith('file_'), atStripe.evidence['customer_name'], atStripe.evidence_details.submission_count]).toEqual(['under_review', true, 'Ada Lovelace', 1]);
    await until(() => disputeNow(d.id), (x) => x['provider_status'] === 'under_review', 'under_review told by charge.dispute.updated');
    const twice = await api('POST', `/v1/disputes/${d.id}/evidence`, { fields: { customer_name: 'Ada' }, submit: true });
    expect([twice.status, twice.json['code']]).toEqual([409, 'dispute_not_open']);

    expect((await control(`/stripe_eu/disputes/${d.provider_reference}/decide`, { outcome: 'won' })).status).toBe(200);
    const won = disputeResource.parse(await waitStatus(d.id, 'won'));
    expect([won.withdrawn, won.provider_status]).toEqual([0, 'won']);
  }, 60_000);

  it('another chargeback accepted: lost by charge.dispute.closed', async () => {
    const p = await capturedPayment(5_100);
    const d = await openDispute('stripe_eu', p.ref, p.id);
    const accepted = await api('POST', `/v1/disputes/${String(d['id'])}/accept`, {});
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    expect(disputeResource.parse(accepted.json).accepted_at).not.toBeNull();
    const lost = disputeResource.parse(await waitStatus(String(d['id']), 'lost'));
    expect([lost.withdrawn, lost.provider_status]).toEqual([5_100, 'lost']);
    const late = await api('POST', `/v1/disputes/${lost.id}/evidence`, { fields: { customer_name: 'Ada' }, submit: true });
    expect([late.status, late.json['code']]).toEqual([409, 'dispute_not_open']);
  }, 60_000);
});

describe('Adyen', () => {
  it('a chargeback: defense reasons with their document types, unknown reason and type refused, a document supplied and defended, then lost by Adyen\'s notifications', async () => {
    const p = await capturedPayment(150_000);
    expect(p.connector).toBe('adyen_eu');
    const listed = await openDispute('adyen_eu', p.ref, p.id);
    const d = disputeResource.parse(await disputeNow(String(listed['id'])));
    expect([d.amount, d.withdrawn, d.connector, d.evidence_due_by === null]).toEqual([150_000, 150_000, 'adyen_eu', false]);

    const options = defenseReasonsResource.parse((await api('GET', `/v1/disputes/${d.id}/defense_reasons`)).json);
    expect(options.connector_type).toBe('adyen');
    const goods = options.reasons.find((r) => r.code === 'GoodsOrServicesProvided')!;
    expect([goods.satisfied, goods.document_types.find((t) => t.code === 'TIDorInvoice')]).toEqual([false, { code: 'TIDorInvoice', requirement: 'Required', supplied: false }]);

    const file = fileResource.parse((await upload(PDF, 'application/pdf')).json);
    for (const [body, path] of [
      [{ defense_reason: 'BecauseISaidSo', files: [{ file: file.id, type: 'TIDorInvoice' }], submit: true }, 'defense_reason'],
      [{ defense_reason: 'GoodsOrServicesProvided', files: [{ file: file.id, type: 'receipt' }], submit: true }, 'files.0.type'],
      [{ defense_reason: 'GoodsOrServicesProvided', fields: { customer_name: 'Ada' }, submit: true }, 'fields.customer_name'],
      [{ files: [{ file: file.id, type: 'TIDorInvoice' }], submit: true }, 'defense_reason'],
    ] as const) {
      const r = await api('POST', `/v1/disputes/${d.id}/evidence`, body);
      expect([r.status, (r.json['errors'] as { path: string }[] | undefined)?.[0]?.path], JSON.stringify(r.json)).toEqual([400, path]);
    }
    // Nothing reached Adyen: the reason is still unsatisfied there.
    const still = defenseReasonsResource.parse((await api('GET', `/v1/disputes/${d.id}/defense_reasons`)).json);
    expect(still.reasons.find((r) => r.code === 'GoodsOrServicesProvided')!.satisfied).toBe(false);

    const sent = await api('POST', `/v1/disputes/${d.id}/evidence`, { defense_reason: 'GoodsOrServicesProvided', files: [{ file: file.id, type: 'TIDorInvoice' }], submit: true });
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    expect(disputeResource.parse(sent.json).evidence).toMatchObject({ defense_reason: 'GoodsOrServicesProvided' });

    expect((await control(`/adyen_eu/disputes/${d.provider_reference}/decide`, { outcome: 'lost' })).status).toBe(200);
    const lost = disputeResource.parse(await waitStatus(d.id, 'lost'));
    expect([lost.withdrawn, lost.provider_status]).toEqual([150_000, 'SECOND_CHARGEBACK/Lost']);
  }, 60_000);

  it('another chargeback accepted: lost by DISPUTE_DEFENSE_PERIOD_ENDED (Accepted)', async () => {
    const p = await capturedPayment(151_000);
    const d = await openDispute('adyen_eu', p.ref, p.id);
    const accepted = await api('POST', `/v1/disputes/${String(d['id'])}/accept`, {});
    expect(accepted.status, JSON.stringify(accepted.json)).toBe(200);
    const lost = disputeResource.parse(await waitStatus(String(d['id']), 'lost'));
    expect([lost.withdrawn, lost.provider_status, lost.accepted_at === null]).toEqual([151_000, 'DISPUTE_DEFENSE_PERIOD_ENDED/Accepted', false]);
  }, 60_000);
});

describe('lists and refusals', () => {
  it('lists newest first with limit, starting_after and ending_before, another merchant sees none, and a decided dispute cannot be answered', async () => {
    const all = disputeList.parse((await api('GET', '/v1/disputes?limit=100')).json).data;
    expect(all.length).toBeGreaterThanOrEqual(4);
    const first = disputeList.parse((await api('GET', '/v1/disputes?limit=2')).json);
    expect([first.data.map((x) => x.id), first.has_more, first.next_cursor]).toEqual([all.slice(0, 2).map((x) => x.id), true, all[1]!.id]);
    const next = disputeList.parse((await api('GET', `/v1/disputes?limit=2&starting_after=${first.next_cursor}`)).json);
    expect(next.data.map((x) => x.id)).toEqual(all.slice(2, 4).map((x) => x.id));
    // Back from the third: the two newer ones, newest first, nothing newer beyond them.
    const back = disputeList.parse((await api('GET', `/v1/disputes?limit=2&ending_before=${all[2]!.id}`)).json);
    expect([back.data.map((x) => x.id), back.has_more, back.next_cursor]).toEqual([all.slice(0, 2).map((x) => x.id), false, null]);
    // A well-formed id of no dispute of this merchant is refused by name, as on every list.
    const unknown = await api('GET', '/v1/disputes?starting_after=dsp_00000000000000000000000000');
    expect([unknown.status, (unknown.json['errors'] as { path: string }[])[0]!.path]).toEqual([400, 'starting_after']);
    const bad = await api('GET', '/v1/disputes?starting_after=pay_123');
    expect([bad.status, (bad.json['errors'] as { path: string }[])[0]!.path]).toEqual([400, 'starting_after']);
    expect((await api('GET', '/v1/disputes/dsp_00000000000000000000000000')).status).toBe(404);
  });
  it('a key of the other mode does not see the dispute (404, listed nowhere); one of its own mode does', async () => {
    const d = (await api('GET', '/v1/disputes?limit=1')).json['data'] as { id: string; payment_id: string }[];
    const dispute = d[0]!;
    const livemode = (await api('GET', `/v1/payments/${dispute.payment_id}`)).json['livemode'] as boolean;
    const keyOf = async (mode: 'test' | 'live'): Promise<string> => {
      const made = await api('POST', '/v1/api_keys', { role: 'read_only', mode, name: `disputes ${mode}` });
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      return String(made.json['secret']);
    };
    const own = await keyOf(livemode ? 'live' : 'test');
    const other = await keyOf(livemode ? 'test' : 'live');
    const as = (key: string, path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({ status: r.status, json: (await r.json()) as Record<string, unknown> }));
    expect((await as(own, `/v1/disputes/${dispute.id}`)).status).toBe(200);
    expect((await as(other, `/v1/disputes/${dispute.id}`)).status).toBe(404);
    expect((await as(other, `/v1/disputes/${dispute.id}/defense_reasons`)).status).toBe(404);
    expect(((await as(other, '/v1/disputes?limit=100')).json['data'] as { id: string }[]).map((x) => x.id)).not.toContain(dispute.id);
  });
});
