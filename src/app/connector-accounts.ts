// From the config file's connector accounts to connector instances. In-process sandboxes are
// started here when an account's endpoint is "sandbox" (their state in the sandbox database, so
// every process with this config talks to one provider); a URL endpoint names an external sandbox
// (switchyard sandbox) or the live API.

import type { Connector, ConnectorAccountConfig, DeclineRule } from '../connectors/contract.ts';
import { createConnector } from '../connectors/registry.ts';
import type { SandboxControl } from '../sandboxes/shared/control.ts';
import { openSandboxDatabase } from '../sandboxes/shared/database.ts';
import type { SandboxDatabase } from '../sandboxes/shared/database.ts';
import { startStripeSandbox } from '../sandboxes/stripe/index.ts';
import { startAdyenSandbox } from '../sandboxes/adyen/index.ts';
import type { ReportUser } from '../sandboxes/adyen/index.ts';
import { sandboxCaFile } from '../sandboxes/adyen/certificate.ts';
import { join } from 'node:path';
import type { ConnectorAccountConfig as YamlAccount, SwitchyardConfig } from '../routing/config-schema.ts';
import { parseDuration } from '../routing/duration.ts';
import { isSandboxEndpoint } from '../routing/snapshot.ts';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly protocol: 'http' | 'https';
}

export function parseEndpoint(url: string): Endpoint {
  const u = new URL(url);
  const protocol = u.protocol === 'https:' ? 'https' : 'http';
  return { host: u.hostname, port: u.port === '' ? (protocol === 'https' ? 443 : 80) : Number(u.port), protocol };
}

function declineTable(config: SwitchyardConfig, type: string): Record<string, DeclineRule> {
  const rows = config.declines[type] ?? {};
  return Object.fromEntries(Object.entries(rows).map(([code, r]) => [code, { class: r.class, retryElsewhere: r.retry_elsewhere }]));
}

/** The account settings each connector factory validates. */
export function accountConfig(config: SwitchyardConfig, account: YamlAccount, endpoint: Endpoint, sandbox: boolean, caPem?: string): ConnectorAccountConfig {
  const retention = account.idempotency.retention;
  const keyRetentionMs = retention === undefined ? undefined : (parseDuration(retention) ?? undefined);
  const timeout = account.authentication.timeout;
  const authenticationTimeoutMs = timeout === undefined ? undefined : (parseDuration(timeout) ?? undefined);
  const common = {
    type: account.type, sandbox, declineTable: declineTable(config, account.type),
    ...(keyRetentionMs === undefined ? {} : { keyRetentionMs }),
    ...(authenticationTimeoutMs === undefined ? {} : { authenticationTimeoutMs }),
  };
  switch (account.type) {
    case 'stripe':
      return {
        ...common,
        settings: { secretKey: account.secret_key, webhookSecrets: account.webhook_secrets, apiHost: endpoint.host, apiPort: endpoint.port, apiProtocol: endpoint.protocol, timeoutMs: account.timeout_ms },
      };
    case 'adyen': {
      // A sandbox (in-process or `switchyard sandbox`) is reached by base URL and trusted by its CA;
      // any other account uses the library's own endpoints: Adyen's test platform (environment TEST),
      // or the live one with the account's URL prefix.
      const ca = caPem !== undefined ? { caPem } : account.certificate_dir !== undefined && sandbox ? { caFile: sandboxCaFile(account.certificate_dir) } : {};
      return {
        ...common,
        settings: {
          apiKey: account.api_key, merchantAccount: account.merchant_account, hmacKeys: account.hmac_keys,
          webhookUsername: account.basic_auth.username, webhookPassword: account.basic_auth.password,
          environment: account.environment ?? (sandbox ? 'TEST' : 'LIVE'), timeoutMs: account.timeout_ms, multicapture: account.multicapture,
          ...(sandbox ? { baseUrl: `https://${endpoint.host}:${endpoint.port}` } : {}),
          ...(account.live_endpoint_url_prefix === undefined ? {} : { liveEndpointUrlPrefix: account.live_endpoint_url_prefix }),
          ...(account.report_time_zone === undefined ? {} : { reportTimeZone: account.report_time_zone }),
          ...(account.report_missing_grace_hours === undefined ? {} : { reportMissingGraceHours: account.report_missing_grace_hours }),
          ...(account.report_api_key === undefined ? {} : { reportApiKey: account.report_api_key }),
          ...(account.report_basic_auth === undefined ? {} : { reportBasicAuth: account.report_basic_auth }),
          ...ca,
        },
      };
    }
  }
}

export interface ConnectorSet {
  readonly connectors: Map<string, Connector>;
  /** In-process sandboxes, by account (empty in live mode). */
  readonly sandboxes: SandboxControl[];
  close(): Promise<void>;
}

export interface ConnectorSetOptions {
  /** Where in-process sandboxes send their webhooks (the gateway's own intake), by account. */
  readonly webhookUrl?: (account: string) => string | undefined;
  /** Where in-process sandboxes keep files (the Adyen sandbox's TLS certificate). */
  readonly dataDir?: string;
  /** The sandbox database (src/sandboxes/shared/database.ts sandboxDatabaseUrl); required when an account's endpoint is "sandbox". */
  readonly sandboxDatabaseUrl?: string;
  readonly log?: (line: string) => void;
}

export const DEFAULT_DATA_DIR = '.data';

export async function buildConnectorSet(config: SwitchyardConfig, opts: ConnectorSetOptions = {}): Promise<ConnectorSet> {
  const connectors = new Map<string, Connector>();
  const sandboxes: SandboxControl[] = [];
  let database: SandboxDatabase | undefined;
  try {
    for (const [name, account] of Object.entries(config.connectors)) {
      let endpoint: Endpoint;
      let sandbox: boolean;
      let caPem: string | undefined;
      if (account.endpoint === 'sandbox') {
        if (opts.sandboxDatabaseUrl === undefined) throw new Error(`connector ${name}: endpoint "sandbox" needs the sandbox database (sandboxDatabaseUrl)`);
        database ??= await openSandboxDatabase(opts.sandboxDatabaseUrl, opts.log === undefined ? {} : { log: opts.log });
        const started = await startInProcessSandbox(database, name, account, opts.webhookUrl?.(name), opts.dataDir ?? DEFAULT_DATA_DIR);
        sandboxes.push(started.control);
        endpoint = started.endpoint;
        caPem = started.control.caPem;
        sandbox = true;
      } else {
        endpoint = parseEndpoint(account.endpoint);
        sandbox = isSandboxEndpoint(account.endpoint);
      }
      connectors.set(name, createConnector(name, accountConfig(config, account, endpoint, sandbox, caPem)));
    }
  } catch (err) {
    await Promise.all(sandboxes.map((s) => s.close()));
    await database?.close();
    throw err;
  }
  return {
    connectors,
    sandboxes,
    async close() {
      await Promise.all([...connectors.values()].map((c) => c.close()));
      await Promise.all(sandboxes.map((s) => s.close()));
      await database?.close();
    },
  };
}

/** The report user the in-process sandbox serves reports to, as live Adyen would (none configured: the payments key). */
export function reportUserOf(account: Extract<YamlAccount, { type: 'adyen' }>): { reportUser?: ReportUser } {
  if (account.report_api_key !== undefined) return { reportUser: { apiKey: account.report_api_key } };
  if (account.report_basic_auth !== undefined) return { reportUser: { basicAuth: account.report_basic_auth } };
  return {};
}

async function startInProcessSandbox(database: SandboxDatabase, name: string, account: YamlAccount, webhookUrl: string | undefined, dataDir: string): Promise<{ control: SandboxControl; endpoint: Endpoint }> {
  switch (account.type) {
    case 'stripe': {
      const secret = account.webhook_secrets[0]!;
      const sb = await startStripeSandbox({ database, account: name, secretKey: account.secret_key, port: 0, ...(webhookUrl === undefined ? {} : { webhook: { url: webhookUrl, secret } }) });
      return { control: sb, endpoint: { host: sb.host, port: sb.port, protocol: 'http' } };
    }
    case 'adyen': {
      const sb = await startAdyenSandbox({
        database, account: name, apiKey: account.api_key, merchantAccount: account.merchant_account, port: 0, multicapture: account.multicapture,
        ...(account.report_time_zone === undefined ? {} : { reportTimeZone: account.report_time_zone }),
        ...reportUserOf(account),
        certificateDirectory: account.certificate_dir ?? join(dataDir, `${name}-tls`),
        ...(webhookUrl === undefined ? {} : { webhook: { url: webhookUrl, hmacKey: account.hmac_keys[0]!, username: account.basic_auth.username, password: account.basic_auth.password } }),
      });
      const ep = parseEndpoint(sb.url);
      return { control: sb, endpoint: { ...ep, protocol: 'https' } };
    }
  }
}
