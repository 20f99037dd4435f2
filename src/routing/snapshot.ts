// A loaded config becomes an immutable snapshot whose version is a content hash. The snapshot
// holds no secrets, so it can be stored in routing_snapshots and read by any process.

import { createHash } from 'node:crypto';
import type { SwitchyardConfig, RouteRule, RouteStrategy } from './config-schema.ts';
import { derivedAccountMode } from './account-modes.ts';
import type { AccountMode } from './account-modes.ts';
import { parseDuration } from './duration.ts';
import { isSandboxEndpoint } from './sandbox-endpoint.ts';

export { isSandboxEndpoint };

export interface ConnectorSummary {
  readonly type: 'stripe' | 'adyen';
  readonly sandbox: boolean;
  /** test or live (src/routing/account-modes.ts): a test key reaches only test accounts, a live key only live ones. */
  readonly mode: AccountMode;
  /** Key retention override from the config, in ms. */
  readonly retentionMs: number | null;
}

export interface RoutingSnapshot {
  readonly version: string;
  readonly connectors: Readonly<Record<string, ConnectorSummary>>;
  readonly rules: readonly RouteRule[];
  readonly default: RouteStrategy;
  readonly maxAttempts: number;
  readonly declines: SwitchyardConfig['declines'];
}

/** Canonical JSON (sorted keys) so that the same content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The accounts that reach a real provider: with any, the gateway closes what only a sandbox setup may leave open. */
export function liveAccounts(snapshot: RoutingSnapshot): string[] {
  return Object.entries(snapshot.connectors).filter(([, c]) => !c.sandbox).map(([name]) => name);
}

export function buildSnapshot(config: SwitchyardConfig): RoutingSnapshot {
  const connectors: Record<string, ConnectorSummary> = {};
  for (const [name, c] of Object.entries(config.connectors)) {
    const retention = c.idempotency.retention;
    connectors[name] = { type: c.type, sandbox: isSandboxEndpoint(c.endpoint), mode: derivedAccountMode(c).mode, retentionMs: retention === undefined ? null : parseDuration(retention) };
  }
  const content = { connectors, rules: config.routing.rules, default: config.routing.default, maxAttempts: config.routing.max_attempts, declines: config.declines };
  const version = `rs_${createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 16)}`;
  return Object.freeze({ version, ...content });
}

/**
 * A snapshot stored before account modes (its connectors carry no `mode`) with each account's mode
 * as migration 0024 derived it from the same data: a sandbox is test, any other account live (the
 * snapshot holds no secrets, so a Stripe test-mode key on a non-sandbox endpoint is not visible in it).
 */
export function withAccountModes(stored: RoutingSnapshot): RoutingSnapshot {
  const connectors = stored.connectors as Readonly<Record<string, Omit<ConnectorSummary, 'mode'> & { mode?: AccountMode }>>;
  if (Object.values(connectors).every((c) => c.mode !== undefined)) return stored;
  const filled = Object.fromEntries(Object.entries(connectors).map(([n, c]) => [n, { ...c, mode: c.mode ?? (c.sandbox ? 'test' : 'live') }]));
  return { ...stored, connectors: filled };
}
