// The setup both crash tests share: a Stripe sandbox outside the gateway (its ledger outlives any
// kill), an API-role runtime in this process (payments and the relay), and one worker child
// process that the test kills with SIGKILL and starts again.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime } from '../../../src/app/runtime.ts';
import type { Runtime } from '../../../src/app/runtime.ts';
import { startStripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import { createTestDatabase } from './db.ts';
import { withOwnSandboxDatabase } from './sandbox-db.ts';
import type { TestDatabase } from './db.ts';
import { KillableWorker } from './killable-worker.ts';
import { REDIS_URL } from './runtime.ts';

export interface CrashRig {
  readonly db: TestDatabase;
  readonly sandbox: StripeSandbox;
  readonly rt: Runtime;
  readonly worker: KillableWorker;
  close(): Promise<void>;
}

export async function startCrashRig(name: string): Promise<CrashRig> {
  const db = await createTestDatabase(name);
  const secretKey = `sk_test_${name}`;
  const sandbox = await withOwnSandboxDatabase(name, (database) => startStripeSandbox({ database, account: 'stripe_a', secretKey, port: 0 }));
  const configFile = join(mkdtempSync(join(tmpdir(), `sy-${name}-`)), 'switchyard.yaml');
  writeFileSync(configFile, `
connectors:
  stripe_a: { type: stripe, endpoint: "${sandbox.url}", secret_key: ${secretKey}, webhook_secrets: [whsec_x], timeout_ms: 3000, queue: { concurrency: 8, rate_per_s: 1000 } }
routing:
  default: { priority: [stripe_a] }
`);
  const prefix = `sytest_${name}_${randomBytes(3).toString('hex')}`;
  const env = { ...process.env, DATABASE_URL: db.url, REDIS_URL, SWITCHYARD_CONFIG: configFile, SWITCHYARD_QUEUE_PREFIX: prefix };
  const worker = new KillableWorker('test/integration/helpers/worker-child.ts', env);
  // No dispatch at commit here: every call goes to the worker child, which is what gets killed (its own follow-ups it runs at commit, so a kill also lands between a commit and its dispatch).
  const rt = await startRuntime({ role: 'api', databaseUrl: db.url, redisUrl: REDIS_URL, configFile, queuePrefix: prefix, relaySweepMs: 300, relayRepublishMs: 2_000, log: () => undefined, dispatchAtCommit: false });
  return {
    db, sandbox, rt, worker,
    async close() {
      await worker.kill();
      await rt.stop();
      await sandbox.close();
      await db.drop();
    },
  };
}
