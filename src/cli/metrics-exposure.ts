// Where /metrics is served, decided once at start. A sandbox-only gateway (npm start on a laptop)
// may serve it open on the API port; an API process with a live account may not, since that port
// faces the merchants: it needs SWITCHYARD_METRICS_TOKEN or its own port (SWITCHYARD_METRICS_PORT).

import type { GatewaySettings } from './settings.ts';

/** Why this process may not start with these metrics settings, or null. */
export function metricsExposureProblem(metrics: GatewaySettings['metrics'], liveAccounts: readonly string[]): string | null {
  if (liveAccounts.length === 0 || metrics.token !== null || metrics.port !== null) return null;
  return `/metrics would be open on the API port while connector account${liveAccounts.length === 1 ? '' : 's'} ${liveAccounts.join(', ')} reach${liveAccounts.length === 1 ? 'es' : ''} a live provider: set SWITCHYARD_METRICS_TOKEN (24+ characters) or SWITCHYARD_METRICS_PORT (its own listener), or both`;
}

/** The start-up line saying how /metrics is served. */
export function metricsStartLine(metrics: GatewaySettings['metrics'], mainUrl: string, ownUrl: string | null): string {
  const token = metrics.token === null ? 'no token' : 'bearer token required (SWITCHYARD_METRICS_TOKEN)';
  if (ownUrl !== null) return `/metrics on its own listener ${ownUrl} (${token}); not on ${mainUrl}`;
  return `/metrics on ${mainUrl} (${metrics.token === null ? 'no token: sandbox accounts only, keep this port private' : token})`;
}
