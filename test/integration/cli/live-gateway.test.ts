// A gateway with a live connector account fails closed (issue 42 §4, §5), as an operator runs it:
// `switchyard routes validate` and `switchyard start` refuse a live account on a missing, empty or
// printed sandbox secret, naming each variable; `start` refuses to serve /metrics open on the API
// port; and a live gateway that starts serves no sandbox control API and says how /metrics is served.
// Real processes (bin/switchyard.js), the shared PostgreSQL, a private redis-server.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/db.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import type { GatewayProcess } from '../helpers/gateway-process.ts';
import { freePort, startPrivateRedis } from '../helpers/redis-server.ts';
import type { PrivateRedis } from '../helpers/redis-server.ts';
import { until } from '../helpers/until.ts';

const VARIABLES = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'ADYEN_API_KEY', 'ADYEN_HMAC_KEY', 'ADYEN_WEBHOOK_PASSWORD', 'ADYEN_REPORT_API_KEY'] as const;
const BLANK = Object.fromEntries(VARIABLES.map((v) => [v, '']));
const OWN = {
  STRIPE_SECRET_KEY: 'sk_live_51OwnKey0123456789abcdef',
  STRIPE_WEBHOOK_SECRET: 'whsec_own0123456789abcdef0123456789',
  ADYEN_API_KEY: 'AQEyhmfxOwnKey0123456789abcdef',
  ADYEN_HMAC_KEY: '0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF',
  ADYEN_WEBHOOK_PASSWORD: 'a-long-own-password-0123456789',
  ADYEN_REPORT_API_KEY: 'AQEyhmfxOwnReportKey0123456789abcdef',
};
const NO_METRICS = { SWITCHYARD_METRICS_TOKEN: '', SWITCHYARD_METRICS_PORT: '' };
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

let db: TestDatabase;
let redis: PrivateRedis;
let dir: string;
let liveFile: string;
let mixedFile: string;

beforeAll(async () => {
  db = await createTestDatabase('live_gateway');
  redis = await startPrivateRedis();
  dir = mkdtempSync(join(tmpdir(), 'sy-live-gateway-'));
  // The shipped config with both accounts on the providers' live APIs, as an operator would switch it.
  liveFile = join(dir, 'live.yaml');
  const live = readFileSync('config/switchyard.yaml', 'utf8')
    .replace(/(stripe_eu:\n\s+type: stripe\n\s+)endpoint: sandbox\b/, '$1endpoint: "https://api.stripe.example"')
    .replace(/(adyen_eu:\n\s+type: adyen\n\s+)endpoint: sandbox\b/, '$1endpoint: "https://checkout-live.adyen.example"');
  expect(live).not.toContain('endpoint: sandbox');
  writeFileSync(liveFile, live);
  // One live account (never called here) beside an in-process sandbox: the sandbox is there, its control API is not.
  mixedFile = join(dir, 'mixed.yaml');
  writeFileSync(mixedFile, `
connectors:
  stripe_live: { type: stripe, endpoint: "https://api.stripe.example", secret_key: "\${STRIPE_SECRET_KEY}", webhook_secrets: ["\${STRIPE_WEBHOOK_SECRET}"] }
  stripe_sb: { type: stripe, endpoint: sandbox, secret_key: sk_test_sandbox, webhook_secrets: [whsec_sandbox] }
routing:
  default: { priority: [stripe_sb, stripe_live] }
`);
});
afterAll(async () => {
  await redis?.stop();
  await db?.drop();
});

/** A key of the operator's own: the development key file is refused next to a live account. */
const VAULT_KEYS = `live1:${randomBytes(32).toString('base64')}`;
const base = () => ({ DATABASE_URL: db.url, REDIS_URL: redis.url, SWITCHYARD_START_TIMEOUT: '5s', SWITCHYARD_VAULT_KEYS: VAULT_KEYS });

describe('a live account on a public sandbox secret', () => {
  it('routes validate exits 1 naming every variable left blank, one line each', async () => {
    const r = await runCli(['routes', 'validate', liveFile], { ...BLANK });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(VARIABLES.length);
    VARIABLES.forEach((v, i) => expect(lines[i]).toContain(`set ${v} to the account's own`));
    expect((await runCli(['routes', 'validate', liveFile], { ...OWN })).code).toBe(0);
  });

  it('start refuses at once, naming the variable, before it listens', async () => {
    const port = await freePort();
    const r = await runCli(['start'], { ...base(), ...OWN, ...NO_METRICS, SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN, STRIPE_WEBHOOK_SECRET: '', SWITCHYARD_CONFIG: liveFile, PORT: String(port) }, 30_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('connectors.stripe_eu.webhook_secrets.0: account stripe_eu is not a sandbox');
    expect(r.stderr).toContain('STRIPE_WEBHOOK_SECRET is unset or empty');
    expect(r.stdout).not.toContain('listening');
  });
});

describe('/metrics and the sandbox control API with a live account', () => {
  it('start refuses the development vault key, naming the variable, before it listens', async () => {
    const r = await runCli(['start'], { ...base(), ...OWN, ...NO_METRICS, SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN, SWITCHYARD_VAULT_KEYS: '', SWITCHYARD_CONFIG: mixedFile, PORT: String(await freePort()) }, 30_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/connector account stripe_live reaches a live provider, and the vault would use the development key in .*dev\.key: set SWITCHYARD_VAULT_KEYS/);
    expect(r.stdout).not.toContain('listening');
  });

  it('start refuses /metrics open on the API port, naming the two settings', async () => {
    const r = await runCli(['start'], { ...base(), ...OWN, ...NO_METRICS, SWITCHYARD_CONFIG: mixedFile, PORT: String(await freePort()) }, 30_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('connector account stripe_live reaches a live provider: set SWITCHYARD_METRICS_TOKEN (24+ characters) or SWITCHYARD_METRICS_PORT');
  });

  it('with a token it starts: the control API is not served, /metrics wants the token, and start-up says both', async () => {
    let gw: GatewayProcess | undefined;
    try {
      gw = await startGatewayProcess('switchyard start', { ...base(), ...OWN, ...NO_METRICS, SWITCHYARD_METRICS_TOKEN: METRICS_TOKEN, SWITCHYARD_CONFIG: mixedFile, PORT: String(await freePort()) });
      const url = gw.url;
      await until(async () => gw!.output(), (o) => o.includes('sandbox control API'), 'the start-up lines', 10_000);
      expect(gw.output()).toContain(`/metrics on ${url} (bearer token required (SWITCHYARD_METRICS_TOKEN))`);
      expect(gw.output()).toContain('live connector accounts (stripe_live): the sandbox control API is not served');
      // The in-process sandbox runs (payments reach it); its switches are not on the gateway.
      expect(gw.output()).toContain('sandboxes: stripe_sb');
      for (const path of ['/_sandbox', '/_sandbox/stripe_sb/faults']) expect((await fetch(`${url}${path}`)).status, path).toBe(404);
      expect((await fetch(`${url}/_sandbox/stripe_sb/outage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"seconds":60}' })).status).toBe(404);
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    } finally {
      await gw?.stop('SIGTERM');
    }
  });
});
