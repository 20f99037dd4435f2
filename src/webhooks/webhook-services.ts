// What the webhook routers and workers share, built once by the runtime: the database, the
// connectors (each verifies its own provider's webhooks), the step environment, the signing
// keys, the clock and the tunables. Routers and workers take this, not the runtime, so the
// runtime can import them without a cycle.

import type { Connector } from '../connectors/contract.ts';
import type { Db } from '../store/db.ts';
import type { StepEnvFactory } from '../jobs/step-env.ts';
import type { WebhookIntakeObserver } from '../observability/metrics.ts';
import type { actionForEvent } from './inbound/event-mapping.ts';
import { AddressPolicy } from './outbound/address-policy.ts';
import { DEFAULT_DELIVERY_SCHEDULE } from './outbound/delivery-schedule.ts';
import type { DeliverySchedule } from './outbound/delivery-schedule.ts';
import type { EndpointKeys } from './outbound/endpoint-keys.ts';
import type { SigningKeyRing } from './outbound/signing-keys.ts';

export interface WebhookOptions {
  /** Per request to a merchant endpoint; a slower endpoint counts as failed and is retried. */
  readonly deliveryTimeoutMs?: number;
  readonly deliverySchedule?: Partial<DeliverySchedule>;
  /** Deliveries running at once per worker process, over all endpoints. */
  readonly deliveryConcurrency?: number;
  /** Deliveries to one endpoint running at once per process: a slow endpoint cannot take every slot. */
  readonly perEndpointInFlight?: number;
  /** An event naming a payment we do not know yet is retried this many times (backoff from inboundRetryBaseMs), then dead-lettered. */
  readonly inboundMaxTries?: number;
  readonly inboundRetryBaseMs?: number;
  /**
   * A failure or reversal that arrived before the success it reverses is held this long at most
   * (from its receipt, on the services' clock), decided again every inboundHoldRecheckMs at most;
   * past it a discrepancy with the event attached is recorded. Default one hour.
   */
  readonly inboundHoldMs?: number;
  readonly inboundHoldRecheckMs?: number;
  /** Largest provider webhook body accepted. */
  readonly inboundBodyLimit?: string;
  readonly random?: () => number;
  /** Which endpoint addresses deliveries may dial (default: SWITCHYARD_WEBHOOK_ALLOW, else no internal address). */
  readonly addressPolicy?: AddressPolicy;
}

export interface WebhookSettings {
  readonly deliveryTimeoutMs: number;
  readonly deliverySchedule: DeliverySchedule;
  readonly deliveryConcurrency: number;
  readonly perEndpointInFlight: number;
  readonly inboundMaxTries: number;
  readonly inboundRetryBaseMs: number;
  readonly inboundHoldMs: number;
  readonly inboundHoldRecheckMs: number;
  readonly inboundBodyLimit: string;
  readonly random: () => number;
  readonly addressPolicy: AddressPolicy;
}

export function webhookSettings(o: WebhookOptions = {}): WebhookSettings {
  return {
    deliveryTimeoutMs: o.deliveryTimeoutMs ?? 10_000,
    deliverySchedule: { ...DEFAULT_DELIVERY_SCHEDULE, ...o.deliverySchedule },
    deliveryConcurrency: o.deliveryConcurrency ?? 32,
    perEndpointInFlight: o.perEndpointInFlight ?? 4,
    inboundMaxTries: o.inboundMaxTries ?? 12,
    inboundRetryBaseMs: o.inboundRetryBaseMs ?? 1_000,
    inboundHoldMs: o.inboundHoldMs ?? 60 * 60_000,
    inboundHoldRecheckMs: o.inboundHoldRecheckMs ?? 30_000,
    inboundBodyLimit: o.inboundBodyLimit ?? '1mb',
    random: o.random ?? Math.random,
    addressPolicy: o.addressPolicy ?? AddressPolicy.fromEnv(),
  };
}

export interface WebhookServices {
  readonly db: Db;
  readonly connectors: ReadonlyMap<string, Connector>;
  readonly envs: StepEnvFactory;
  readonly keys: SigningKeyRing;
  /** Each endpoint's own signing keys (derived from one secret). */
  readonly endpointKeys: EndpointKeys;
  readonly settings: WebhookSettings;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** Publish new outbox rows now (the relay kick); the relay's sweep covers a missed kick. */
  readonly kick: (outboxIds?: readonly number[]) => void;
  /** Intake counters (metrics); absent in tests that build services by hand. */
  readonly observe?: WebhookIntakeObserver;
  /** Planted-bug seam for the chaos harness: replaces actionForEvent. Production passes none. */
  readonly mapEvent?: typeof actionForEvent;
}
