// The gateway with the shipped config (in-process Stripe and Adyen sandboxes) behind a real API
// listener, so the sandboxes' notifications come in through the API's intake — what the ledger and
// reconciliation tests run against.

import { readFileSync } from 'node:fs';
import { createApiApp } from '../../../src/api/app.ts';
import { listenApi } from '../../../src/api/server.ts';
import type { ApiServer } from '../../../src/api/server.ts';
import type { AdyenSandbox } from '../../../src/sandboxes/adyen/index.ts';
import type { StripeSandbox } from '../../../src/sandboxes/stripe/index.ts';
import type { RuntimeOptions } from '../../../src/app/runtime.ts';
import { startTestGateway } from './runtime.ts';
import type { TestGateway } from './runtime.ts';

export interface ShippedGateway {
  readonly gw: TestGateway;
  readonly server: ApiServer;
  readonly stripe: StripeSandbox;
  readonly adyen: AdyenSandbox;
  close(): Promise<void>;
}

export async function startShippedGateway(name: string, over: Partial<RuntimeOptions> = {}): Promise<ShippedGateway> {
  const server = await listenApi(0, '127.0.0.1');
  const gw = await startTestGateway(name, readFileSync('config/switchyard.yaml', 'utf8'), { webhookBaseUrl: `http://127.0.0.1:${server.port}`, ...over });
  server.attach(createApiApp(gw.rt, { log: () => undefined }));
  return {
    gw,
    server,
    stripe: gw.rt.sandboxes.find((s) => s.account === 'stripe_eu') as StripeSandbox,
    adyen: gw.rt.sandboxes.find((s) => s.account === 'adyen_eu') as unknown as AdyenSandbox,
    async close() {
      await gw.close();
      await server.close(0);
    },
  };
}
