// A worker process for the crash tests: the runtime `switchyard start --role worker` runs,
// configured from the environment, killed with SIGKILL by the parent at random moments.
// Deliveries retry fast so a test over merchant webhooks finishes in seconds.
import { appendFileSync } from 'node:fs';
import { startRuntime } from '../../../src/app/runtime.ts';

const rt = await startRuntime({
  role: 'worker',
  databaseUrl: process.env.DATABASE_URL!,
  redisUrl: process.env.REDIS_URL!,
  configFile: process.env.SWITCHYARD_CONFIG!,
  queuePrefix: process.env.SWITCHYARD_QUEUE_PREFIX!,
  relaySweepMs: 300,
  relayRepublishMs: 2_000,
  // SWITCHYARD_TEST_WEBHOOKS (JSON) overrides these for one test's workers.
  webhooks: { deliveryTimeoutMs: 1_000, deliverySchedule: { baseMs: 200, capMs: 1_000 }, ...(JSON.parse(process.env.SWITCHYARD_TEST_WEBHOOKS ?? '{}') as object) },
  // SWITCHYARD_TEST_LOG: a file the test reads when an assertion fails (this process's log lines).
  log: process.env.SWITCHYARD_TEST_LOG === undefined ? () => undefined : (line: string) => appendFileSync(process.env.SWITCHYARD_TEST_LOG!, `${process.pid} ${line}\n`),
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void rt.stop().then(() => process.exit(0));
});
