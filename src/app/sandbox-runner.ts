// `switchyard sandbox`: the provider sandboxes alone, so crash tests can kill the gateway while the
// providers — and their ledgers — live on. It reads the gateway's own config: every connector
// account whose endpoint is a loopback URL gets its sandbox on that port, and sends its webhooks
// to the gateway's intake. Its state is the sandbox database's, the same the in-process sandboxes
// of this config would use.

import { join } from 'node:path';
import { startAdyenSandbox } from '../sandboxes/adyen/index.ts';
import type { SandboxControl } from '../sandboxes/shared/control.ts';
import { openSandboxDatabase } from '../sandboxes/shared/database.ts';
import { startControlServer } from '../sandboxes/shared/control-server.ts';
import type { ControlServer } from '../sandboxes/shared/control-server.ts';
import { startStripeSandbox } from '../sandboxes/stripe/index.ts';
import type { SwitchyardConfig } from '../routing/config-schema.ts';
import { isSandboxEndpoint } from '../routing/snapshot.ts';
import { DEFAULT_DATA_DIR, parseEndpoint, reportUserOf } from './connector-accounts.ts';

export interface SandboxRunnerOptions {
  readonly controlPort: number;
  /** The gateway's base URL, where sandboxes send webhooks (`${base}/webhooks/${account}`). */
  readonly gatewayUrl: string;
  readonly dataDir?: string;
  /** The sandbox database (sandboxDatabaseUrl of the gateway's DATABASE_URL, or SANDBOX_DATABASE_URL). */
  readonly databaseUrl: string;
}

export interface RunningSandboxes {
  readonly sandboxes: readonly SandboxControl[];
  readonly control: ControlServer;
  close(): Promise<void>;
}

/**
 * A gateway that does not answer, or answers 5xx, is retried for ~25 s (10 tries, doubling from
 * 50 ms), as providers keep retrying a receiver that is down: a gateway restarting or waiting out
 * its database must not lose the events sent meanwhile. A refusal (4xx) keeps the short budget.
 */
const WEBHOOK_RETRY = { transientAttempts: 10 } as const;

export async function runSandboxes(config: SwitchyardConfig, opts: SandboxRunnerOptions): Promise<RunningSandboxes> {
  const sandboxes: SandboxControl[] = [];
  const database = await openSandboxDatabase(opts.databaseUrl);
  try {
    for (const [name, account] of Object.entries(config.connectors)) {
      if (account.endpoint === 'sandbox' || !isSandboxEndpoint(account.endpoint)) continue;
      const { host, port } = parseEndpoint(account.endpoint);
      const webhookUrl = `${opts.gatewayUrl}/webhooks/${name}`;
      switch (account.type) {
        case 'stripe':
          sandboxes.push(await startStripeSandbox({ database, account: name, secretKey: account.secret_key, host, port, webhook: { url: webhookUrl, secret: account.webhook_secrets[0]! }, webhookRetry: WEBHOOK_RETRY }));
          break;
        case 'adyen':
          sandboxes.push(
            await startAdyenSandbox({
              database, account: name, apiKey: account.api_key, merchantAccount: account.merchant_account, host, port, multicapture: account.multicapture,
              ...(account.report_time_zone === undefined ? {} : { reportTimeZone: account.report_time_zone }),
              ...reportUserOf(account),
              certificateDirectory: account.certificate_dir ?? join(opts.dataDir ?? DEFAULT_DATA_DIR, `${name}-tls`),
              webhook: { url: webhookUrl, hmacKey: account.hmac_keys[0]!, username: account.basic_auth.username, password: account.basic_auth.password },
              webhookRetry: WEBHOOK_RETRY,
            }),
          );
          break;
      }
    }
    if (sandboxes.length === 0) throw new Error('no connector account names a loopback URL endpoint: nothing to run (use endpoint: http://127.0.0.1:<port>)');
    const control = await startControlServer({ port: opts.controlPort, sandboxes });
    return {
      sandboxes,
      control,
      async close() {
        await control.close();
        await Promise.all(sandboxes.map((s) => s.close()));
        await database.close();
      },
    };
  } catch (err) {
    await Promise.all(sandboxes.map((s) => s.close()));
    await database.close();
    throw err;
  }
}
