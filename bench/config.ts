// The bench's gateway config: the shipped config/switchyard.yaml with provider queue limits lifted
// (the shipped 16 / 200 per s would cap the measurement, not the gateway) and, for bench/run.ts,
// the sandboxes' endpoints on loopback ports (they run in their own process).

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { withDatabase } from '../src/store/database-url.ts';
import { ensureDatabase, migrate } from '../src/store/migrate.ts';

/** Where the out-of-process sandboxes listen (`switchyard sandbox`); absent: the in-process ones (bench/trace.ts). */
export interface ExternalSandboxes {
  readonly stripePort: number;
  readonly adyenPort: number;
  /** The Adyen sandbox writes its CA here; the gateway trusts it from here. */
  readonly certDir: string;
  /** One more Stripe account, routed to by nothing: the direct integration's, in the same sandbox process. */
  readonly extra?: { readonly name: string; readonly port: number; readonly secretKey: string };
}

export function benchConfig(external?: ExternalSandboxes): string {
  let shipped = readFileSync(new URL('../config/switchyard.yaml', import.meta.url), 'utf8');
  if (external !== undefined) {
    const stripe = /(\n {2}stripe_eu:\n(?: {4}.*\n)*?) {4}endpoint: sandbox[^\n]*/;
    const adyen = /(\n {2}adyen_eu:\n(?: {4}.*\n)*?) {4}endpoint: sandbox[^\n]*/;
    if (!stripe.test(shipped) || !adyen.test(shipped)) throw new Error('config/switchyard.yaml changed shape: update bench/config.ts benchConfig()');
    shipped = shipped
      .replace(stripe, `$1    endpoint: "http://127.0.0.1:${external.stripePort}"`)
      .replace(adyen, `$1    endpoint: "https://127.0.0.1:${external.adyenPort}"\n    certificate_dir: "${external.certDir}"`);
    const x = external.extra;
    if (x !== undefined) {
      shipped = shipped.replace(/\nrouting:\n/, `\n  ${x.name}:\n    type: stripe\n    endpoint: "http://127.0.0.1:${x.port}"\n    secret_key: ${x.secretKey}\n    webhook_secrets: ["whsec_${x.name}"]\nrouting:\n`);
    }
  }
  const queue = 'queue: { concurrency: 64, rate_per_s: 100000 }';
  const text = shipped
    .replace(/queue: \{ concurrency: 16, rate_per_s: 200 \}/, queue)
    .replace(/(\n\s+)merchant_account: SwitchyardSandbox/, `$1merchant_account: SwitchyardSandbox$1${queue}`);
  if (text.split(queue).length !== 3) throw new Error('config/switchyard.yaml changed shape: update bench/config.ts benchConfig()');
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const file = join(dir, 'switchyard.yaml');
  writeFileSync(file, text);
  return file;
}

/** Drops and re-creates the bench's own database, migrated; drops its sandbox's (<name>_sandbox), which the gateway re-creates on first use. */
export async function recreateDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(`${name}_sandbox`)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await ensureDatabase(url);
  await migrate(url);
}
