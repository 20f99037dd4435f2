// Sandboxes in their own process space (`switchyard sandbox`): the gateway reaches them by URL,
// trusts the Adyen sandbox's CA from the shared certificate directory, and the control API
// answers on its own port.
import { createSandboxTestDatabase } from '../helpers/sandbox-db.ts';
import type { TestSandboxDatabase } from '../helpers/sandbox-db.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandboxes } from '../../../src/app/sandbox-runner.ts';
import type { RunningSandboxes } from '../../../src/app/sandbox-runner.ts';
import { parseConfigText } from '../../../src/routing/config-loader.ts';
import { freePort } from '../helpers/redis-server.ts';
import { settled, startTestGateway } from '../helpers/runtime.ts';
import type { TestGateway } from '../helpers/runtime.ts';

let sandboxDb: TestSandboxDatabase | undefined;
let running: RunningSandboxes;
let gw: TestGateway;
let controlPort: number;

beforeAll(async () => {
  const [stripePort, adyenPort] = [await freePort(), await freePort()];
  controlPort = await freePort();
  const certs = mkdtempSync(join(tmpdir(), 'sy-certs-'));
  const yaml = `
connectors:
  stripe_x: { type: stripe, endpoint: "http://127.0.0.1:${stripePort}", secret_key: sk_test_x, webhook_secrets: [whsec_x] }
  adyen_x:
    type: adyen
    endpoint: "https://127.0.0.1:${adyenPort}"
    api_key: key
    merchant_account: M
    hmac_keys: ["44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"]
    basic_auth: { username: u, password: p }
    certificate_dir: "${certs}"
routing:
  rules:
    - { name: large, when: { amount: { gte: 100000 } }, priority: [adyen_x, stripe_x] }
  default: { priority: [stripe_x, adyen_x] }
`;
  const parsed = parseConfigText(yaml, 'x.yaml', {});
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  sandboxDb = await createSandboxTestDatabase('jobs_external_sandbox');
  running = await runSandboxes(parsed.config, { controlPort, gatewayUrl: 'http://127.0.0.1:1', databaseUrl: sandboxDb.url });
  gw = await startTestGateway('jobs_external_sandbox', yaml);
});
afterAll(async () => {
  await gw?.close();
  await running?.close();
  await sandboxDb?.drop();
});

describe('switchyard sandbox (external)', () => {
  it('authorizes over the network on both sandboxes, and the control API reports the ledgers', async () => {
    expect(gw.rt.sandboxes).toHaveLength(0);
    const viaStripe = await gw.waitFor((await gw.pay()).id, settled);
    const viaAdyen = await gw.waitFor((await gw.pay({ amount: 250_000 })).id, settled);
    expect([viaStripe.attempts[0]!.connector, viaStripe.state]).toEqual(['stripe_x', 'authorized']);
    expect([viaAdyen.attempts[0]!.connector, viaAdyen.state]).toEqual(['adyen_x', 'authorized']);
    const res = await fetch(`http://127.0.0.1:${controlPort}/_sandbox/adyen_x/ledger`);
    const body = (await res.json()) as { payments: { reference: string; authorized: number }[] };
    expect(body.payments.find((p) => p.reference === viaAdyen.attempts[0]!.id)?.authorized).toBe(250_000);
    const ca = await fetch(`http://127.0.0.1:${controlPort}/_sandbox/adyen_x/ca.pem`);
    expect(await ca.text()).toContain('BEGIN CERTIFICATE');
  });
});
