// What a connector author hands the conformance kit: how to start the provider's sandbox, how to
// build the connector against it, and the few provider-specific facts the kit cannot know.

import type { SandboxControl } from '../sandboxes/shared/control.ts';
import type { Connector, FailureSituation } from '../connectors/contract.ts';

export interface ConformanceSandbox extends SandboxControl {
  readonly host: string;
  readonly port: number;
}

export interface WebhookEndpoint {
  readonly url: string;
  readonly secret: string;
}

export interface KitConnectorOptions {
  /** Per-attempt timeout; the kit shortens it to drive the timeout row. */
  readonly timeoutMs?: number;
  /** Credentials the provider will refuse (drives the authentication row). */
  readonly badCredentials?: boolean;
  /** Configure the account as live: test cards must then be refused before sending. */
  readonly liveAccount?: boolean;
  /** Secrets the connector accepts for webhooks; the kit passes [previous, current] to test rotation. */
  readonly webhookSecrets?: readonly string[];
}

/** A raw HTTP answer in the provider's own wire format, for situations the sandbox cannot produce. */
export interface WireReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Announce the whole body, send only its first half, then cut the connection. */
  readonly truncate?: boolean;
}

/** An object as the sandbox serialises it next to the provider's published example of the same type. */
export interface WireSample {
  readonly objectType: string;
  readonly actual: Readonly<Record<string, unknown>>;
  readonly reference: Readonly<Record<string, unknown>>;
}

export interface AmountCase {
  readonly currency: string;
  readonly amount: number;
  /** What the provider's API receives, in its decimals (the ledger entry's `received`). */
  readonly received: number;
}

export interface ConformanceSubject<S extends ConformanceSandbox = ConformanceSandbox> {
  readonly name: string;
  makeSandbox(options: { readonly webhook: WebhookEndpoint }): Promise<S>;
  makeConnector(sandbox: S, options?: KitConnectorOptions): Connector;
  /** The same connector type pointed at any host/port (the kit's wire stub), with sandbox credentials. */
  makeConnectorAt(endpoint: { readonly host: string; readonly port: number }, options?: KitConnectorOptions): Connector;
  /** Signs a webhook body the way the provider does; returns the headers to deliver with it. */
  signWebhook(rawBody: Buffer, secret: string, timestampSeconds: number): Record<string, string>;
  /** Three secrets in the provider's format: the kit rotates from `previous` to `current`; `foreign` is never configured. */
  readonly webhookSecrets: { readonly previous: string; readonly current: string; readonly foreign: string };
  /** The provider's answer for a failure situation its sandbox cannot produce; null when the sandbox can. */
  scriptedReply(situation: FailureSituation): WireReply | null;
  /**
   * A 0-, a 2- and a 3-decimal currency, and those whose provider decimals differ from ISO 4217's
   * (CLP, ISK, IDR, CVE; Stripe's MGA) where the provider takes them: an amount in gateway (ISO)
   * minor units, and the value the provider must receive for it in its own decimals. The sandbox's
   * ledger reads that value with the provider's decimals (its own copy), so a wrong conversion
   * shows as a different charge there, not only as a different number on the wire.
   */
  readonly amountCases: readonly AmountCase[];
  /** Amounts in gateway units the provider's decimals cannot express: refused before sending. */
  readonly unsendableAmounts: readonly { readonly currency: string; readonly amount: number }[];
  /** Sandbox objects next to the provider's published examples (fixtures). */
  wireSamples(sandbox: S, connector: Connector): Promise<readonly WireSample[]>;
  /**
   * Providers that sign inside the body (Adyen: an HMAC per notification item) re-sign the body
   * itself; the kit then uses this instead of signWebhook for rotation checks.
   */
  signWebhookBody?(rawBody: Buffer, secret: string): { readonly rawBody: Buffer; readonly headers: Record<string, string> };
  /**
   * False when the provider's signature covers no timestamp (Adyen, which redelivers for 30 days):
   * the kit then checks that an old delivery still verifies instead of expecting a refusal.
   * Duplicates are the inbox's job (unique provider event id). Default true.
   */
  readonly webhookSignatureTimestamped?: boolean;
  /** The provider's wire is TLS only (Adyen): the kit's stubs serve it with this key pair, which makeConnectorAt trusts. */
  readonly wireTls?: { readonly key: string; readonly cert: string };
  /** A certificate authority the customer's browser must trust for the provider's pages (a sandbox's own certificate). */
  readonly browserCa?: string;
  /** How many times the official SDK resends a reset request by itself (stripe-node: once, even with retries off). Default 1. */
  readonly sdkResendsAfterReset?: number;
  /**
   * For a connector whose records come from reports its provider announces (no
   * fetchReconciliationRecords): let the sandbox's days close and announce their reports; answers
   * the announced file names, which the kit downloads through the connector (`reports`).
   */
  publishReports?(sandbox: S): Promise<readonly string[]>;
}
