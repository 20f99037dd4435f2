// The operations dashboard end to end in headless Chromium (Debian's package, driven by
// playwright-core): sign in with the admin token, see a stuck payment the test parked with its
// timeline, resolve it, and replay a dead letter with the button. Also: the admin API and
// bull-board refuse requests without the token.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../src/api/app.ts';
import { listenApi } from '../../../src/api/server.ts';
import { paymentBody, startApiGateway } from '../api/helpers.ts';
import type { ApiGateway } from '../api/helpers.ts';
import { launchChromium } from '../helpers/browser.ts';
import type { TestBrowser } from '../helpers/browser.ts';
import { twoStripeConfig } from '../helpers/runtime.ts';

const TOKEN = 'ops-test-token-0123456789abcdef';

let api: ApiGateway;
let chromium: TestBrowser;
beforeAll(async () => {
  // API role only: nothing moves the payments this test parks.
  api = await startApiGateway('obs_dashboard', { adminToken: TOKEN, authorizationWaitMs: 100 }, twoStripeConfig(), { role: 'api', dispatchAtCommit: false });
  chromium = await launchChromium();
});
afterAll(async () => {
  await chromium?.close();
  await api?.close();
});

async function parkedPayment(ago: string): Promise<string> {
  const created = await api.call('POST', '/v1/payments', { body: paymentBody() });
  expect(created.status).toBe(202);
  await api.gw.db.db.execute(sql`UPDATE payments SET state = 'needs_review', updated_at = now() - ${ago}::interval WHERE id = ${created.json.id}`);
  return created.json.id;
}

const state = async (id: string) => (await api.gw.db.db.execute<{ state: string }>(sql`SELECT state FROM payments WHERE id = ${id}`)).rows[0]!.state;
const outboxStatus = async (id: number) => (await api.gw.db.db.execute<{ status: string }>(sql`SELECT status FROM outbox WHERE id = ${id}`)).rows[0]!.status;

describe('operations dashboard', () => {
  it('keeps the admin API and bull-board behind the token', async () => {
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers });
    expect((await get('/ops/api/overview')).status).toBe(401);
    expect((await get('/ops/api/overview', { authorization: 'Bearer wrong-token-wrong-token-wrong' })).status).toBe(401);
    expect((await get('/ops/api/overview', { cookie: 'sy_ops=1.forged' })).status).toBe(401);
    expect((await get('/ops/queues/')).status).toBe(401);
    const overview = await get('/ops/api/overview', { authorization: `Bearer ${TOKEN}` });
    expect(overview.status).toBe(200);
    expect(await overview.json()).toMatchObject({ indicators: { breakers: { stripe_a: 'closed', stripe_b: 'closed' } }, stuck: [], dead_letters: [], counters: [] });
    const board = await get('/ops/queues/', { authorization: `Bearer ${TOKEN}` });
    expect(board.status).toBe(200);
    expect(await board.text()).toContain('Switchyard queues');
    const login = await fetch(`${api.url}/ops/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'nope' }) });
    expect(login.status).toBe(401);
  });

  it('is off, and says how to turn it on, without an admin token', async () => {
    const server = await listenApi(0, '127.0.0.1');
    server.attach(createApiApp(api.gw.rt, { log: () => undefined }));
    try {
      const pageRes = await fetch(`http://127.0.0.1:${server.port}/ops`);
      expect(pageRes.status).toBe(503);
      expect(await pageRes.text()).toContain('Set SWITCHYARD_ADMIN_TOKEN');
      expect((await fetch(`http://127.0.0.1:${server.port}/ops/api/overview`, { headers: { authorization: 'Bearer anything-at-all-anything-at-all' } })).status).toBe(503);
      expect((await fetch(`http://127.0.0.1:${server.port}/ops/queues/`)).status).toBe(503);
    } finally {
      await server.close(100);
    }
  });

  it('resolves through the admin API like the CLI: needs_review only, note required', async () => {
    const id = await parkedPayment('10 minutes');
    const post = (body: unknown) => fetch(`${api.url}/ops/api/payments/${id}/resolve`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const noNote = await post({ as: 'failed', note: ' ' });
    expect([noNote.status, ((await noNote.json()) as { error: string }).error]).toEqual([422, 'a note is required: say why (it is kept in the payment timeline)']);
    expect((await post({ as: 'captured', note: 'x' })).status).toBe(422);
    const ok = await post({ as: 'voided', note: 'Adyen customer area: authorisation cancelled' });
    expect(await ok.json()).toMatchObject({ id, from: 'needs_review', to: 'voided' });
    expect(await state(id)).toBe('voided');
    const again = await post({ as: 'failed', note: 'again' });
    expect([again.status, ((await again.json()) as { error: string }).error]).toEqual([422, `payment ${id} not resolved: operator resolution needs a payment in needs_review, not voided`]);
  });

  it('in Chromium: signs in, shows a stuck payment with its timeline, resolves it, and replays a dead letter', async () => {
    const stuck = await parkedPayment('2 hours');
    const dead = await api.gw.db.db.execute<{ id: string }>(sql`
      INSERT INTO outbox (kind, payload, payment_id, run_at, status, attempts, last_error)
      VALUES ('timer', '{"type":"timer","timer":"query"}'::jsonb, ${stuck}, now(), 'dead', 8, 'redis went away') RETURNING id`);
    const deadId = Number(dead.rows[0]!.id);

    const page = await chromium.context.newPage();
    await page.goto(`${api.url}/ops`);
    await page.getByLabel('Operator token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();

    const row = page.locator(`tr[data-payment="${stuck}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.textContent()).toContain('needs_review');
    expect(await row.textContent()).toContain('2h 0');
    expect(await page.locator('#cards').textContent()).toContain('needs_review1');
    // This process's counters: the API created the payment (created -> authorizing, origin api).
    expect(await page.locator('#counters').textContent()).toMatch(/transitionsfrom=created to=authorizing connector=stripe_a origin=api\d/);

    await row.getByRole('button', { name: 'Timeline' }).click();
    await page.getByText('created → authorizing').waitFor({ timeout: 5_000 });

    const deadRow = page.locator(`tr[data-dead-letter="${deadId}"]`);
    expect(await deadRow.textContent()).toContain('redis went away');
    await deadRow.getByRole('button', { name: 'Replay' }).click();
    await page.getByText(`dead letter ${deadId} replayed`).waitFor({ timeout: 5_000 });
    expect(await outboxStatus(deadId)).toBe('pending');
    await deadRow.waitFor({ state: 'detached', timeout: 5_000 });

    await row.getByLabel('resolve as').selectOption('failed');
    await row.getByLabel('note').fill('PSP confirms no charge (OPS-7)');
    await row.getByRole('button', { name: 'Resolve' }).click();
    await page.getByText(`payment ${stuck}: needs_review → failed`).waitFor({ timeout: 5_000 });
    expect(await state(stuck)).toBe('failed');
    const timeline = await api.gw.db.db.execute<{ origin: string; reason: string }>(sql`SELECT origin, reason FROM payment_transitions WHERE payment_id = ${stuck} ORDER BY id DESC LIMIT 1`);
    expect(timeline.rows[0]).toEqual({ origin: 'operator', reason: 'operator: PSP confirms no charge (OPS-7)' });
    // The page names who is signed in (the admin token is the operator "admin") and lists what they did.
    expect(await page.locator('#whoami').textContent()).toBe('signed in as admin');
    await page.locator('#audit tr[data-audit="payment.resolve"]').first().waitFor({ timeout: 5_000 });
    expect(await page.locator('#audit').textContent()).toContain('dead_letter.replay');
    expect(await page.locator('#audit').textContent()).toContain('operator.sign_in');

    // bull-board beside it, on the same session: its page, assets and API calls all pass the admin check.
    await page.getByRole('link', { name: 'Queues (bull-board)' }).click();
    await page.getByText('call.stripe_a').first().waitFor({ timeout: 15_000 });
    expect(await page.title()).toBe('Switchyard queues');

    // Signing out ends the session server-side: the page asks for a token again.
    await page.goto(`${api.url}/ops`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Operator token').waitFor({ timeout: 5_000 });
    const signedOut = await api.gw.db.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM operator_audit WHERE action = 'operator.sign_out' AND operator = 'admin'`);
    expect(signedOut.rows[0]!.n).toBe(1);
    await page.close();
  });
});
