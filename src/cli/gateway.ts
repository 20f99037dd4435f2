// Starts a gateway process: `npm start` (role all) and `switchyard start --role ...`. Validates
// the config, listens (503 until ready), checks Redis, migrates, starts the runtime — waiting out
// PostgreSQL and Redis blips for SWITCHYARD_START_TIMEOUT (src/cli/start-retry.ts) — attaches the
// API, and shuts down in order on SIGTERM/SIGINT: stop accepting, finish requests in flight, stop
// workers and relay, close pools.

import { stopOnTermSignals } from './stop-signals.ts';
import { createApiApp } from '../api/app.ts';
import { healthRoutes } from '../api/health-routes.ts';
import { startIdempotencyPurge } from '../api/idempotency-purge.ts';
import { listenApi } from '../api/server.ts';
import type { ApiServer } from '../api/server.ts';
import { ConfigError, startRuntime } from '../app/runtime.ts';
import type { GatewaySeams, Role, Runtime } from '../app/runtime.ts';
import { maskDatabaseUrl } from '../store/database-url.ts';
import express from 'express';
import { createLogger, lineLog } from '../observability/logger.ts';
import type { Logger } from '../observability/logger.ts';
import { metricsRouter } from '../observability/http.ts';
import { checkRedis, migrateDatabase } from './preflight.ts';
import { retryStart } from './start-retry.ts';
import { formatProblems, loadConfigFile } from '../routing/config-loader.ts';
import type { GatewaySettings } from './settings.ts';
import { SettingsError } from './settings.ts';
import { operatorsFromEnv } from '../ops/operators.ts';
import { cookiePolicyFromEnv, CookiePolicyError } from '../ops/operator-auth.ts';
import { revokeRotatedSessions } from '../ops/operator-sessions.ts';
import type { MetricsExposure } from '../observability/http.ts';
import { liveAccounts } from '../routing/snapshot.ts';
import { metricsExposureProblem, metricsStartLine } from './metrics-exposure.ts';
import { developmentKeyWarning } from '../vault/dev-key.ts';
import { checkRemoteVaultForStart, checkVaultRecordsForStart, vaultKeysForStart } from '../vault/gateway-start.ts';
import { vaultClientSettingsFromEnv } from '../vault/client.ts';

export interface GatewayOptions extends GatewaySettings {
  readonly role: Role;
  /** Workers listen (health only) when a port is given. */
  readonly listen: boolean;
  readonly print: (line: string) => void;
  /** Where the JSON log lines go (default stderr); every line, plain or structured, is written as JSON by pino. */
  readonly log?: (line: string) => void;
  readonly logger?: Logger;
  /** Planted-bug seams (the chaos harness's own entry point); `switchyard start` passes none. */
  readonly seams?: GatewaySeams;
}

export interface RunningGateway {
  readonly runtime: Runtime;
  readonly server: ApiServer | null;
  stop(): Promise<void>;
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const ops = operatorsFromEnv();
  if (!ops.ok) throw new SettingsError(ops.problem);
  let cookies;
  try {
    cookies = cookiePolicyFromEnv();
  } catch (err) {
    if (err instanceof CookiePolicyError) throw new SettingsError(err.message);
    throw err;
  }
  // A config that does not validate will not heal: say so before waiting on any server.
  const loaded = loadConfigFile(o.configFile);
  if (!loaded.ok) throw new ConfigError(formatProblems(loaded));
  const live = liveAccounts(loaded.snapshot);
  // A worker's --port serves health and /metrics only (no merchant reaches it): already a port of its own.
  const exposure = o.listen && o.role !== 'worker' ? metricsExposureProblem(o.metrics, live) : null;
  if (exposure !== null) throw new SettingsError(exposure);
  const logger = o.logger ?? createLogger(o.log);
  const log = lineLog(logger);
  // Before listening: a development vault key next to a live provider will not heal either. Its
  // warning is logged once the gateway is up, so a failed start keeps its one line. With a vault
  // process (SWITCHYARD_VAULT_URL, refused without its token) the keys live only on its host.
  const remoteVault = vaultClientSettingsFromEnv(process.env);
  const vaultKeys = remoteVault === null ? await vaultKeysForStart(live) : null;

  // Listening first lets /readyz answer 503 (not connection refused) while the dependencies are waited for.
  const server = o.listen ? await listenApi(o.port) : null;
  // Its own listener when configured, so the public port never serves it; a token on it when configured.
  const metricsServer = server !== null && o.metrics.port !== null ? await listenApi(o.metrics.port).catch(async (err: unknown) => {
    await server.close(0);
    throw err;
  }) : null;
  const onMetricsPort: MetricsExposure = o.metrics.token === null ? { mode: 'open' } : { mode: 'token', token: o.metrics.token };
  const onMainPort: MetricsExposure = metricsServer !== null ? { mode: 'elsewhere' } : onMetricsPort;
  let rt: Runtime;
  try {
    const retry = { startedAt: Date.now(), timeoutMs: o.startTimeoutMs, log };
    await retryStart('Redis', () => checkRedis(o.redisUrl), retry);
    const migrated = await retryStart('PostgreSQL', () => migrateDatabase(o.databaseUrl), retry);
    log(`database ${maskDatabaseUrl(o.databaseUrl)}: ${migrated.applied.length === 0 ? 'up to date' : `applied ${migrated.applied.join(', ')}`}`);
    if (vaultKeys !== null) await retryStart('PostgreSQL (vault)', () => checkVaultRecordsForStart(o.databaseUrl, vaultKeys, { log }), retry);
    else await retryStart('the vault process', () => checkRemoteVaultForStart(remoteVault!, live), retry);
    // The runtime's own start (snapshot, queues, signing keys, workers) talks to both; a blip there
    // tears down what it opened and starts it again.
    rt = await retryStart('PostgreSQL or Redis', () => startRuntime({
      role: o.role, databaseUrl: o.databaseUrl, redisUrl: o.redisUrl, configFile: o.configFile, log, logger, orphanGraceMs: o.orphanGraceMs,
      ...(o.jobRetries.attempts === null ? {} : { jobAttempts: o.jobRetries.attempts }),
      ...(o.jobRetries.backoffMs === null ? {} : { jobBackoffMs: o.jobRetries.backoffMs }),
      ...(o.relayRepublishMs === null ? {} : { relayRepublishMs: o.relayRepublishMs }),
      ...(o.rateLimitPrefix === null ? {} : { rateLimitPrefix: o.rateLimitPrefix }),
      ...(o.seams === undefined ? {} : { seams: o.seams }),
      ...(server === null ? {} : { webhookBaseUrl: `http://127.0.0.1:${server.port}` }),
    }), retry);
  } catch (err) {
    await server?.close(0);
    await metricsServer?.close(0);
    throw err;
  }
  rt.config.watch();
  if (vaultKeys?.source.kind === 'development_file') log(developmentKeyWarning(vaultKeys.source.path));
  metricsServer?.attach(express().use(metricsRouter(rt.metrics, onMetricsPort)));

  let stopPurge = (): void => undefined;
  if (server !== null) {
    if (o.role === 'worker') {
      server.attach(express().use(healthRoutes(rt)).use(metricsRouter(rt.metrics, onMainPort)));
    } else {
      // A token rotated since the last start ends the sessions opened under the old one.
      const revoked = await revokeRotatedSessions(rt.database.db, ops.operators, rt.now());
      if (revoked > 0) log(`operator sessions: ${revoked} opened under a token that changed since were revoked`);
      server.attach(createApiApp(rt, {
        authorizationWaitMs: o.waitMs, modificationWaitMs: o.waitMs, idempotencyRetentionMs: o.idempotencyRetentionMs, admission: { maxInFlight: o.maxInFlight }, log,
        tokens: { perHour: o.tokensPerHour }, rateLimits: o.rateLimits, ops: { operators: ops.operators, cookies }, metrics: onMainPort,
      }));
      stopPurge = startIdempotencyPurge(rt.database.db, { now: rt.now, log });
    }
  }

  const pieces = o.role === 'all' ? 'API and workers' : o.role === 'api' ? 'API' : 'workers';
  const sandboxes = rt.sandboxes.length === 0 ? 'no in-process sandboxes' : `sandboxes: ${rt.sandboxes.map((s) => s.account).join(', ')}`;
  o.print(`Switchyard ${pieces} ${server === null ? 'running (no HTTP listener)' : `listening on ${server.url}`} (${sandboxes}; routing ${rt.config.current().snapshot.version})`);
  if (server !== null) o.print(metricsStartLine(o.metrics, server.url, metricsServer?.url ?? null));
  if (live.length > 0 && o.role !== 'worker') o.print(`live connector accounts (${live.join(', ')}): the sandbox control API is not served`);
  if (o.role !== 'worker') o.print(`Create a merchant: npx switchyard merchants create --name "My shop"   (then: curl -H "Authorization: Bearer <api_key>" ${server?.url ?? ''}/v1/payments)`);

  let stopping: Promise<void> | null = null;
  return {
    runtime: rt,
    server,
    stop() {
      stopping ??= (async () => {
        stopPurge();
        await metricsServer?.close();
        await server?.close();
        await rt.stop();
      })();
      return stopping;
    },
  };
}

/**
 * SIGTERM/SIGINT stop the gateway once; a second signal exits at once. SIGHUP reloads the config
 * (ConfigHolder.watch). Returns the same graceful stop, for other reasons to stop.
 */
export function stopOnSignals(gateway: RunningGateway, print: (line: string) => void): (why: string) => void {
  const onSignal = stopOnTermSignals(() => gateway.stop(), print);
  print(`pid ${process.pid}: SIGTERM or SIGINT stops it gracefully; SIGHUP reloads ${gateway.runtime.config.file}`);
  return onSignal;
}
