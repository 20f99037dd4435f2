// A loaded config becomes an immutable snapshot whose version is a content hash. The snapshot
// holds no secrets, so it can be stored in routing_snapshots and read by any process.

import { createHash } from 'node:crypto';
import { isIPv4 } from 'node:net';
import type { SwitchyardConfig, RouteRule, RouteStrategy } from './config-schema.ts';
import { parseDuration } from './duration.ts';

export interface ConnectorSummary {
  readonly type: 'stripe' | 'adyen';
  readonly sandbox: boolean;
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

/**
 * In-process sandboxes and sandboxes on this machine (switchyard sandbox) take test cards and the
 * public sandbox secrets (src/routing/live-secrets.ts); nothing else does. A loopback address only:
 * a name such as 127.0.0.1.example.com is somebody else's machine.
 */
export function isSandboxEndpoint(endpoint: string): boolean {
  if (endpoint === 'sandbox') return true;
  const host = new URL(endpoint).hostname;
  return host === 'localhost' || host === '[::1]' || (isIPv4(host) && host.startsWith('127.'));
}

/** The accounts that reach a real provider: with any, the gateway closes what only a sandbox setup may leave open. */
export function liveAccounts(snapshot: RoutingSnapshot): string[] {
  return Object.entries(snapshot.connectors).filter(([, c]) => !c.sandbox).map(([name]) => name);
}

export function buildSnapshot(config: SwitchyardConfig): RoutingSnapshot {
  const connectors: Record<string, ConnectorSummary> = {};
  for (const [name, c] of Object.entries(config.connectors)) {
    const retention = c.idempotency.retention;
    connectors[name] = { type: c.type, sandbox: isSandboxEndpoint(c.endpoint), retentionMs: retention === undefined ? null : parseDuration(retention) };
  }
  const content = { connectors, rules: config.routing.rules, default: config.routing.default, maxAttempts: config.routing.max_attempts, declines: config.declines };
  const version = `rs_${createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 16)}`;
  return Object.freeze({ version, ...content });
}
