// Adyen reports the way live Adyen delivers them: the account-zone days close on the sandbox clock,
// the sandbox announces each day's reports (REPORT_AVAILABLE) to the gateway's intake, and the
// gateway records them; reconciliation then downloads exactly those (src/reconcile/provider-reports.ts).

import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import { nextCalendarDay, zoneDay, zoneMidnight } from '../../../src/sandboxes/adyen/report-zone.ts';
import type { TestGateway } from './runtime.ts';

/**
 * Closes the sandbox's current account-zone day (its clock moves to a minute past the next
 * midnight plus the report delay), announces the reports of every closed day with notifications
 * on (what was queued while they were off stays unsent), and waits until the gateway has recorded
 * every one. Answers the announced file names. `zone`: the account's report_time_zone (the shipped
 * config's by default).
 */
export async function publishAdyenReports(gw: TestGateway, adyen: AdyenSandbox, zone = 'Europe/Amsterdam', account = adyen.account): Promise<string[]> {
  const now = adyen.clock.nowMs();
  const closed = zoneMidnight(zone, nextCalendarDay(zoneDay(zone, now))) + adyen.reportDelayMs + 60_000;
  await adyen.advanceClock(Math.ceil((closed - now) / 1000));
  await adyen.configureWebhooks({ enabled: true });
  const files = await adyen.announceReports();
  for (let i = 0; i < 400; i++) {
    const { rows } = await gw.db.pool.query<{ file_name: string }>('SELECT file_name FROM provider_reports WHERE connector = $1 AND file_name = ANY($2)', [account, files]);
    if (rows.length === files.length) return files;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the gateway did not record the announced reports ${files.join(', ')}`);
}
