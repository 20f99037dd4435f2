// Hot reload on a running gateway, the file replaced as an editor saves it (a temporary file renamed
// over the config), as issue 43 found it: every replace is seen, not only the first; a broken file,
// an empty weighted set and a new or changed connector account are refused at error and counted,
// the old snapshot keeps serving, and /readyz says which snapshot it serves and that the file on
// disk differs from it. A payment after the refused reloads still routes on the snapshot served.
// A real `switchyard start` process, the shared PostgreSQL, a private redis-server.

import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../src/routing/config-loader.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { until } from '../helpers/until.ts';

const config = (o: { default?: string; extra?: string; stripeB?: string } = {}): string => `
connectors:
  stripe_a: { type: stripe, endpoint: sandbox, secret_key: sk_test_a, webhook_secrets: [whsec_a] }
  stripe_b: { type: stripe, endpoint: sandbox, secret_key: ${o.stripeB ?? 'sk_test_b'}, webhook_secrets: [whsec_b] }
${o.extra ?? ''}
routing:
  default: ${o.default ?? '{ priority: [stripe_a, stripe_b] }'}
`;

const versionOf = (text: string): string => {
  const r = parseConfigText(text, 'x.yaml', {});
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.snapshot.version;
};

interface Ready {
  checks: { config: string };
  config: { snapshot: string; loaded_at: string; file_on_disk: string; last_reload: { result: string; trigger: string; problems?: string[] } | null };
}

let db: TestDatabase;
let redis: PrivateRedis;
let file: string;
let gateway: GatewayProcess;
const readyz = async (): Promise<Ready> => (await (await fetch(`${gateway.url}/readyz`)).json()) as Ready;
const metrics = async (): Promise<string> => (await fetch(`${gateway.url}/metrics`)).text();

/** As an editor saves: the new text in a temporary file beside the config, renamed over it. */
function save(text: string): void {
  const tmp = `${file}.swp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

beforeAll(async () => {
  db = await createTestDatabase('config_reload');
  redis = await startPrivateRedis();
  file = join(mkdtempSync(join(tmpdir(), 'sy-config-reload-')), 'switchyard.yaml');
  writeFileSync(file, config());
  gateway = await startGatewayProcess('switchyard start', {
    DATABASE_URL: db.url, REDIS_URL: redis.url, SWITCHYARD_CONFIG: file, PORT: String(await freePort()),
    SWITCHYARD_METRICS_TOKEN: '', SWITCHYARD_METRICS_PORT: '', SWITCHYARD_START_TIMEOUT: '10s',
  });
});
afterAll(async () => {
  await gateway?.stop('SIGTERM');
  await redis?.stop();
  await db?.drop();
});

describe('hot reload of a running gateway', () => {
  it('applies every atomic replace, not only the first', async () => {
    expect((await readyz()).config).toMatchObject({ snapshot: versionOf(config()), file_on_disk: 'same', last_reload: null });
    for (const d of ['{ priority: [stripe_b, stripe_a] }', '{ weighted: { stripe_a: 1, stripe_b: 1 } }', '{ priority: [stripe_b] }']) {
      save(config({ default: d }));
      const r = await until(readyz, (x) => x.config.snapshot === versionOf(config({ default: d })), `the reload to ${d}`, 10_000);
      expect(r.checks.config).toBe(r.config.snapshot);
      expect(r.config).toMatchObject({ file_on_disk: 'same', last_reload: { result: 'swapped', trigger: 'file' } });
    }
    expect(await metrics()).toMatch(/^switchyard_config_reload_total\{result="swapped"\} 3$/m);
  });

  it('refuses a broken file, an empty weighted set and new or changed accounts, at error, counted, and says the file on disk differs', async () => {
    const served = versionOf(config({ default: '{ priority: [stripe_b] }' }));
    const refusals: [string, RegExp][] = [
      ['routing: [', /not valid YAML/],
      [config({ default: '{ weighted: {} }' }), /routing\.default\.weighted: needs at least one connector account with a weight/],
      [config({ extra: '  stripe_c: { type: stripe, endpoint: sandbox, secret_key: sk_test_c, webhook_secrets: [whsec_c] }', default: '{ priority: [stripe_c] }' }), /connectors\.stripe_c: new connector account stripe_c needs a restart/],
      [config({ stripeB: 'sk_test_rotated', default: '{ priority: [stripe_b] }' }), /connectors\.stripe_b: connector account stripe_b changed \(secret_key\): needs a restart/],
    ];
    let n = 0;
    for (const [text, problem] of refusals) {
      save(text);
      n += 1;
      const r = await until(metrics, (m) => m.includes(`switchyard_config_reload_total{result="rejected"} ${n}`), `refusal ${n} counted`, 10_000);
      expect(r).toContain(`switchyard_config_snapshot_info{snapshot="${served}"} 1`);
      const ready = await readyz();
      expect(ready.config).toMatchObject({ snapshot: served, file_on_disk: 'differs', last_reload: { result: 'rejected', trigger: 'file' } });
      expect(ready.config.last_reload!.problems!.join('\n')).toMatch(problem);
      const logged = gateway.output().split('\n').filter((l) => l.includes('config reload rejected'));
      expect(logged).toHaveLength(n);
      expect(JSON.parse(logged[n - 1]!)).toMatchObject({ level: 'error' });
    }
    expect(gateway.output()).not.toContain('sk_test_rotated');
    expect(await metrics()).toMatch(/^switchyard_config_last_load_success_timestamp_seconds \d+(\.\d+)?$/m);

    // The snapshot served still routes: a payment goes to stripe_b, the only candidate of the default.
    const merchant = await runCli(['merchants', 'create', '--name', 'reload shop'], { DATABASE_URL: db.url });
    const { api_key: key } = JSON.parse(merchant.stdout) as { api_key: string };
    const res = await fetch(`${gateway.url}/v1/payments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'reload-1' },
      body: JSON.stringify({ amount: 1000, currency: 'EUR', reference: 'r-1', capture_method: 'manual', payment_method: { type: 'card', test_card: '4242424242424242' } }),
    });
    const payment = (await res.json()) as { status: string; routing: { snapshot: string; candidates: string[] } };
    expect(payment).toMatchObject({ status: 'authorized', routing: { snapshot: served, candidates: ['stripe_b'] } });

    // Put back as served: the file is the one served again.
    save(config({ default: '{ priority: [stripe_b] }' }));
    const back = await until(readyz, (x) => x.config.last_reload?.result === 'unchanged', 'the reload of the file as served', 10_000);
    expect(back.config).toMatchObject({ snapshot: served, file_on_disk: 'same' });
  });
});
