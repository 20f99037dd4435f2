// Adyen reports as live Adyen serves them (issue 33): the sandbox announces each settlement details
// batch and daily payments accounting report with a REPORT_AVAILABLE notification (pspReference =
// the file name, reason = a URL); the gateway records each once, downloads it by name from its
// configured origin (never the notification's URL), imports it once and reconciles; a batch number
// that never arrives is a finding after the grace period. Days pass on the sandbox clock.
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCapture } from '../../../src/app/payment-service.ts';
import { reconcile } from '../../../src/reconcile/run.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { basicAuthorization, notificationBody, signNotificationItem } from '../../../src/sandboxes/adyen/notifications.ts';
import { settled } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';
import { startShippedGateway } from '../helpers/shipped-gateway.ts';
import type { ShippedGateway } from '../helpers/shipped-gateway.ts';

let shipped: ShippedGateway;
let gw: TestGateway;
let adyen: AdyenSandbox;
const DAY_S = 86_400;
const HMAC = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

beforeAll(async () => {
  shipped = await startShippedGateway('adyen_reports');
  ({ gw, adyen } = shipped);
}, 60_000);
afterAll(async () => {
  await shipped?.close();
});

const run = () => {
  const now = () => new Date(adyen.clock.nowMs() + 1_000);
  const to = now();
  return reconcile({ db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now }, { window: { from: new Date(to.getTime() - DAY_S * 1000), to }, connector: 'adyen_eu' });
};
interface ReportRow { file_name: string; kind: string; sequence: number | null; content: string | null; imported_at: Date | null }
const reports = async (): Promise<ReportRow[]> => (await gw.db.pool.query<ReportRow>(`SELECT file_name, kind, sequence, content, imported_at FROM provider_reports WHERE connector = 'adyen_eu' ORDER BY file_name`)).rows;
async function until<T>(f: () => Promise<T>, ok: (t: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const t = await f();
    if (ok(t)) return t;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out');
}
const postIntake = (items: Parameters<typeof signNotificationItem>[0][]) =>
  fetch(`http://127.0.0.1:${shipped.server.port}/webhooks/adyen_eu`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basicAuthorization('switchyard', 'sandbox') },
    body: notificationBody(items.map((i) => signNotificationItem(i, HMAC))),
  });

describe('Adyen REPORT_AVAILABLE', () => {
  let batch = 0;
  it('notification -> download -> import once -> reconcile', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 150_000 })).id, settled);
    expect(p.attempts.find((a) => a.status === 'authorized')!.connector).toBe('adyen_eu');
    await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
    await gw.waitFor(p.id, (x) => x.state === 'captured');
    await adyen.advanceClock(DAY_S + 3_600);
    const announced = await adyen.announceReports();
    expect(announced.some((f) => /^settlement_detail_report_batch_\d+\.csv$/.test(f))).toBe(true);
    expect(announced.some((f) => /^payments_accounting_report_\d{4}_\d{2}_\d{2}\.csv$/.test(f))).toBe(true);
    const rows = await until(reports, (r) => r.length >= announced.length);
    expect(rows.map((r) => r.file_name).sort()).toEqual([...announced].sort());
    batch = rows.find((r) => r.kind === 'settlement_batch')!.sequence!;

    const first = await run();
    const after = await reports();
    expect(after.every((r) => r.content !== null && r.imported_at !== null)).toBe(true);
    const postings = async () => (await gw.db.pool.query<{ source: string }>(`SELECT source FROM ledger_transactions WHERE source LIKE $1`, [`settlement:adyen_eu:${batch}:%`])).rows;
    const posted = await postings();
    expect(posted.length).toBeGreaterThanOrEqual(1);
    expect(first.settlement.lines).toBeGreaterThanOrEqual(1);

    // Announced again (a redelivery) and run again: recorded once, imported once, nothing posted.
    await postIntake([{ amount: { value: 0, currency: 'EUR' }, eventCode: 'REPORT_AVAILABLE', eventDate: new Date().toISOString(), merchantAccountCode: 'SwitchyardSandbox', merchantReference: '', pspReference: `settlement_detail_report_batch_${batch}.csv`, reason: 'x', success: 'true' }]);
    const second = await run();
    expect(second.settlement.posted).toBe(0);
    expect(await postings()).toHaveLength(posted.length);
    expect((await reports()).length).toBe(rows.length);
  });

  it('statuses come from the announced daily payments accounting reports, read from the database, not downloaded by day', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 120_000 })).id, settled);
    await requestCapture(gw.rt, gw.merchantId, p, undefined, true);
    const c = await gw.waitFor(p.id, (x) => x.state === 'captured');
    const psp = c.attempts.find((a) => a.status === 'authorized' || a.connector === 'adyen_eu')!.providerRef!;
    const at = adyen.clock.nowMs();
    await adyen.advanceClock(DAY_S + 3_600);
    const announced = await adyen.announceReports();
    await until(reports, (r) => announced.every((f) => r.some((x) => x.file_name === f)));
    const window = { from: new Date(at - 3_600_000), to: new Date(at + 3_600_000) };
    const deps = { db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now: () => new Date(adyen.clock.nowMs()) };
    await reconcile(deps, { window, connector: 'adyen_eu' }); // downloads what was announced
    const requests = adyen.requestsReceived();
    const s = await reconcile(deps, { window, connector: 'adyen_eu' });
    expect(adyen.requestsReceived()).toBe(requests); // nothing fetched by day name
    expect(s.checked).toBeGreaterThanOrEqual(1);
    expect(s.by_category.no_counterpart).toBe(0);
    const texts = (await reports()).filter((r) => r.kind === 'accounting_daily' && r.content !== null).map((r) => ({ name: r.file_name, text: r.content! }));
    const record = gw.rt.connectors.get('adyen_eu')!.reports!.records(texts, window).find((r) => r.providerRef === psp);
    expect(record).toMatchObject({ status: 'Settled', authorized: 120_000, captured: 120_000, refunded: 0 });
    expect(texts.some((t) => /,SentForSettle,/.test(t.text) && /,Authorised,/.test(t.text))).toBe(true);
  });

  it('a forged download host is never contacted: the URL is built from the configured origin and the file name', async () => {
    const connections: Socket[] = [];
    const trap = createServer((s) => {
      connections.push(s);
      s.destroy();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as AddressInfo).port;
    try {
      await adyen.advanceClock(DAY_S);
      const next = `settlement_detail_report_batch_${batch + 1}.csv`;
      const base = { amount: { value: 0, currency: 'EUR' }, eventCode: 'REPORT_AVAILABLE', eventDate: new Date().toISOString(), merchantAccountCode: 'SwitchyardSandbox', merchantReference: '', success: 'true' as const };
      // A genuine, signed file name with a forged reason (the HMAC does not cover it), and names that are no report.
      const res = await postIntake([
        { ...base, pspReference: next, reason: `https://127.0.0.1:${port}/reports/download/MerchantAccount/SwitchyardSandbox/${next}` },
        { ...base, pspReference: `../../../steal/${next}`, reason: `https://127.0.0.1:${port}/x` },
        { ...base, pspReference: `https://127.0.0.1:${port}/settlement_detail_report_batch_9.csv`, reason: '' },
      ]);
      expect(res.status).toBe(200);
      const rows = await until(reports, (r) => r.some((x) => x.file_name === next));
      expect(rows.filter((r) => r.file_name.includes('/') || r.file_name.includes('..'))).toEqual([]);
      await run();
      const row = (await reports()).find((r) => r.file_name === next)!;
      expect(row.content).toMatch(/^Company Account,/); // downloaded from the sandbox, the configured origin
      expect(connections).toHaveLength(0);
    } finally {
      await new Promise((r) => trap.close(r));
    }
  });

  it('a settlement batch that is never announced is a missing_report finding after the grace period', async () => {
    await adyen.advanceClock(3 * DAY_S);
    const all = await adyen.announceReports({ except: [`settlement_detail_report_batch_${batch + 3}.csv`] });
    expect(all).toContain(`settlement_detail_report_batch_${batch + 4}.csv`);
    await until(reports, (r) => r.some((x) => x.file_name === `settlement_detail_report_batch_${batch + 4}.csv`));
    const early = await run();
    const earlyRows = await gw.db.pool.query(`SELECT 1 FROM discrepancies WHERE provider_ref = 'settlement_detail_report_batch_${batch + 3}.csv'`);
    expect([early.checked >= 0, earlyRows.rowCount]).toEqual([true, 0]); // batch +4 announced just now: within the grace period
    await adyen.advanceClock(13 * 3_600);
    const late = await run();
    expect(late.by_category.missing_report).toBeGreaterThanOrEqual(1);
    const { rows } = await gw.db.pool.query<{ provider_ref: string; status: string }>(`SELECT provider_ref, status FROM discrepancies WHERE category = 'missing_report' AND provider_ref LIKE 'settlement%'`);
    expect(rows).toEqual([{ provider_ref: `settlement_detail_report_batch_${batch + 3}.csv`, status: 'open' }]);
    expect((await run()).new).toBe(0); // one open row per key
  });
});
