// What the runtime starts for observability: the metrics registry (indicators read at scrape
// time) and the transition feed's listener, which counts and logs every committed transition.

import { readIndicators } from './indicators.ts';
import type { IndicatorSources } from './indicators.ts';
import type { Logger } from './logger.ts';
import { GatewayMetrics } from './metrics.ts';
import { notePaymentOfRequest } from './request-context.ts';
import { onTransition } from './transition-feed.ts';
import type { TransitionEvent } from './transition-feed.ts';

export { createLogger, lineLog } from './logger.ts';
export type { Logger } from './logger.ts';
export { GatewayMetrics } from './metrics.ts';

export interface Observability {
  readonly metrics: GatewayMetrics;
  stop(): void;
}

/** One line per transition: payment, merchant, connector, origin, edge (request id added by the logger when an API request caused it). */
export function logTransition(logger: Logger, e: TransitionEvent): void {
  const fields = {
    payment_id: e.paymentId, merchant_id: e.merchantId, connector: e.connector, origin: e.origin,
    from: e.from, to: e.to, outcome: e.kind, code: e.code, reason: e.reason, transition_id: e.transitionId,
  };
  if (e.kind === 'illegal') logger.warn(fields, 'transition');
  else logger.info(fields, 'transition');
}

export function startObservability(logger: Logger, sources: IndicatorSources, opts: { defaultMetrics?: boolean } = {}): Observability {
  const metrics = new GatewayMetrics(() => readIndicators(sources), opts);
  const unsubscribe = onTransition((e) => {
    metrics.transition(e);
    logTransition(logger, e);
    notePaymentOfRequest(e.paymentId);
  });
  return { metrics, stop: unsubscribe };
}
