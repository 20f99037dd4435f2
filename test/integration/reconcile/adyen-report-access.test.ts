// Adyen reconciliation that cannot quietly see nothing (issue 43): reports are downloaded only by
// the names Adyen announced (never a file named by UTC day, which live Adyen does not serve), an
// account that never had a report announced gets a missing_report finding once the report of its
// first payment's day is past its grace, and report downloads use the report user's credential —
// a 401/403 is a finding naming the credential, not an error or silence.
//
// One external sandbox (as `switchyard sandbox` runs it) serves reports to its report user only;
// four gateway accounts point at it: no report credential (the payments key: 403), a wrong report
// key (401), the right one, and one that has payments but never an announcement.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../../src/reconcile/run.ts';
import { startAdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { withOwnSandboxDatabase } from '../helpers/sandbox-db.ts';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

const REPORT_KEY = 'AQE_report_user_key';
const DAY_MS = 86_400_000;
let sandbox: AdyenSandbox;
let gw: TestGateway;

beforeAll(async () => {
  const certs = mkdtempSync(join(tmpdir(), 'sy-report-access-'));
  sandbox = await withOwnSandboxDatabase('report_access', (database) =>
    startAdyenSandbox({ database, account: 'adyen_ext', apiKey: 'payments_key', merchantAccount: 'M', certificateDirectory: certs, reportUser: { apiKey: REPORT_KEY } }));
  const account = (extra: string) => `
    type: adyen
    endpoint: "${sandbox.url}"
    api_key: payments_key
    merchant_account: M
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: u, password: p }
    certificate_dir: "${certs}"${extra}`;
  gw = await startTestGateway('adyen_report_access', `
connectors:
  adyen_nocred:${account('')}
  adyen_wrong:${account('\n    report_api_key: not_the_report_key')}
  adyen_right:${account(`\n    report_api_key: ${REPORT_KEY}`)}
  adyen_silent:${account(`\n    report_api_key: ${REPORT_KEY}`)}
routing:
  default: { priority: [adyen_silent] }
`);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await sandbox?.close();
});

const run = (account: string, now: Date) =>
  reconcile({ db: gw.rt.database.db, connectors: gw.rt.connectors, envs: gw.rt.envs, now: () => now }, { window: { from: new Date(now.getTime() - DAY_MS), to: now }, connector: account });
const findings = async (account: string) =>
  (await gw.db.pool.query<{ provider_ref: string; detail: string; dedupe_key: string }>(`SELECT provider_ref, detail, dedupe_key FROM discrepancies WHERE connector = $1 AND category = 'missing_report' ORDER BY created_at`, [account])).rows;
const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
const file = `payments_accounting_report_${yesterday.replace(/-/g, '_')}.csv`;

/** What the intake records for a REPORT_AVAILABLE (adyen-reports.test.ts drives the notification itself). */
async function announced(account: string): Promise<void> {
  await gw.db.pool.query(`INSERT INTO provider_reports (connector, file_name, kind, report_day, announced_at) VALUES ($1, $2, 'accounting_daily', $3, now())`, [account, file, yesterday]);
}

describe('report downloads use the report user', () => {
  it('the payments key (no report credential configured) is refused 403: a finding naming the credential, the run goes on', async () => {
    await announced('adyen_nocred');
    const s = await run('adyen_nocred', new Date());
    expect(s.errors).toEqual([]);
    const [f] = await findings('adyen_nocred');
    expect(f).toMatchObject({ provider_ref: 'connectors.adyen_nocred.api_key (no report_api_key or report_basic_auth configured)', dedupe_key: expect.stringContaining(':report_access') as unknown });
    expect(f!.detail).toContain('HTTP 403');
    expect(f!.detail).toContain('Merchant Report Download role');
    // Found again, it stays one open finding.
    await run('adyen_nocred', new Date());
    expect(await findings('adyen_nocred')).toHaveLength(1);
  });

  it('a report key Adyen does not know is refused 401, named', async () => {
    await announced('adyen_wrong');
    await run('adyen_wrong', new Date());
    const [f] = await findings('adyen_wrong');
    expect(f?.provider_ref).toBe('connectors.adyen_wrong.report_api_key');
    expect(f!.detail).toContain('HTTP 401');
  });

  it("the report user's key downloads the announced report, and finds nothing to report", async () => {
    await announced('adyen_right');
    await run('adyen_right', new Date());
    const { rows } = await gw.db.pool.query<{ content: string | null; last_error: string | null }>(`SELECT content, last_error FROM provider_reports WHERE connector = 'adyen_right'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.last_error).toBeNull();
    expect(rows[0]!.content).toContain('Psp Reference');
    expect(await findings('adyen_right')).toEqual([]);
  });
});

describe('an account that never had a report announced', () => {
  it('asks Adyen for nothing, and is a missing_report finding once its first payment day is past the grace', async () => {
    const p = await gw.waitFor((await gw.pay({ amount: 1_500 })).id, settled);
    expect([p.attempts[0]!.connector, p.state]).toEqual(['adyen_silent', 'authorized']);
    const firstDay = p.attempts[0]!.createdAt.slice(0, 10);
    const requests = sandbox.requestsReceived();
    // Within the grace (12 h after the day ends): nothing yet, and nothing fetched by day name.
    await run('adyen_silent', new Date());
    expect(sandbox.requestsReceived()).toBe(requests);
    expect(await findings('adyen_silent')).toEqual([]);
    // Two days on: the report of the first payment's day is long overdue.
    await run('adyen_silent', new Date(Date.now() + 2 * DAY_MS));
    expect(sandbox.requestsReceived()).toBe(requests);
    const [f] = await findings('adyen_silent');
    expect(f?.provider_ref).toBe(`payments_accounting_report_${firstDay.replace(/-/g, '_')}.csv`);
    expect(f!.detail).toContain('no report was ever announced for this account');
  });
});
