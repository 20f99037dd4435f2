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
  /** Deliveries to one endpoint running at once, over every worker process (a lease each): a slow endpoint cannot take every slot. */
  readonly perEndpointInFlight?: number;
  /** Deliveries of one merchant running at once, over every worker process. */
  readonly perMerchantInFlight?: number;
  /** Enabled endpoints one merchant may have; creating one more is refused (409 endpoint_limit_reached). */
  readonly maxEndpointsPerMerchant?: number;
  /** How long a delivery's claim and endpoint lease last unless renewed (renewed every third while it runs). */
  readonly deliveryLeaseMs?: number;
  /** How often an idle worker looks for due deliveries (it also looks whenever a slot frees or it commits some). */
  readonly deliveryPollMs?: number;
  /** A worker process takes deliveries at most this often (each take fills all its free slots). */
  readonly deliveryTakeIntervalMs?: number;
  /** Executions of a delivery's outbox row that fail on our side (database, bug) before it is dead-lettered. */
  readonly deliveryMaxExecutions?: number;
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
  /**
   * The claim on an inbound-event or merchant-event outbox row: renewed every third of it while the
   * job runs, so a killed worker's row is free within one lease and a slow one keeps it. Default 15 s.
   */
  readonly claimLeaseMs?: number;
  readonly random?: () => number;
  /** Which endpoint addresses deliveries may dial (default: SWITCHYARD_WEBHOOK_ALLOW, else no internal address). */
  readonly addressPolicy?: AddressPolicy;
}

export interface WebhookSettings {
  readonly deliveryTimeoutMs: number;
  readonly deliverySchedule: DeliverySchedule;
  readonly deliveryConcurrency: number;
  readonly perEndpointInFlight: number;
  readonly perMerchantInFlight: number;
  readonly maxEndpointsPerMerchant: number;
  readonly deliveryLeaseMs: number;
  readonly deliveryPollMs: number;
  readonly deliveryTakeIntervalMs: number;
  readonly deliveryMaxExecutions: number;
  readonly inboundMaxTries: number;
  readonly inboundRetryBaseMs: number;
  readonly inboundHoldMs: number;
  readonly inboundHoldRecheckMs: number;
  readonly inboundBodyLimit: string;
  readonly claimLeaseMs: number;
  readonly random: () => number;
  readonly addressPolicy: AddressPolicy;
}

/** The limits an operator sets without code (docs/webhooks.md): the same in every process. */
export const WEBHOOK_LIMIT_ENV = {
  maxEndpointsPerMerchant: 'SWITCHYARD_WEBHOOK_MAX_ENDPOINTS',
  perEndpointInFlight: 'SWITCHYARD_WEBHOOK_ENDPOINT_IN_FLIGHT',
  perMerchantInFlight: 'SWITCHYARD_WEBHOOK_MERCHANT_IN_FLIGHT',
} as const;

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw new Error(`${name} must be a positive integer, not "${raw.slice(0, 20)}"`);
  return Number(raw);
}

/** Options win over the environment (WEBHOOK_LIMIT_ENV), which wins over the defaults. */
export function webhookSettings(o: WebhookOptions = {}, env: NodeJS.ProcessEnv = {}): WebhookSettings {
  const deliveryTimeoutMs = o.deliveryTimeoutMs ?? 10_000;
  const fromEnv = (k: keyof typeof WEBHOOK_LIMIT_ENV) => positiveIntFromEnv(env, WEBHOOK_LIMIT_ENV[k]);
  return {
    deliveryTimeoutMs,
    deliverySchedule: { ...DEFAULT_DELIVERY_SCHEDULE, ...o.deliverySchedule },
    deliveryConcurrency: o.deliveryConcurrency ?? 32,
    perEndpointInFlight: o.perEndpointInFlight ?? fromEnv('perEndpointInFlight') ?? 4,
    perMerchantInFlight: o.perMerchantInFlight ?? fromEnv('perMerchantInFlight') ?? 16,
    maxEndpointsPerMerchant: o.maxEndpointsPerMerchant ?? fromEnv('maxEndpointsPerMerchant') ?? 16,
    // Renewed while the POST runs; short, so a killed worker's slot is free again soon.
    deliveryLeaseMs: o.deliveryLeaseMs ?? Math.min(15_000, deliveryTimeoutMs + 5_000),
    deliveryPollMs: o.deliveryPollMs ?? 200,
    deliveryTakeIntervalMs: o.deliveryTakeIntervalMs ?? 50,
    deliveryMaxExecutions: o.deliveryMaxExecutions ?? 8,
    inboundMaxTries: o.inboundMaxTries ?? 12,
    inboundRetryBaseMs: o.inboundRetryBaseMs ?? 1_000,
    inboundHoldMs: o.inboundHoldMs ?? 60 * 60_000,
    inboundHoldRecheckMs: o.inboundHoldRecheckMs ?? 30_000,
    inboundBodyLimit: o.inboundBodyLimit ?? '1mb',
    claimLeaseMs: o.claimLeaseMs ?? 15_000,
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
