// What every provider sandbox exposes to the shared control API (docs/sandbox.md).

/**
 * `release`: a void or refund whose idempotency key names a release (`…:release:<n>`, the
 * gateway's release of an approval it does not keep); such a request is also a `void` / `refund`.
 * `resume`: the call that resumes a payment after the shopper's authentication (Adyen
 * /payments/details; Stripe's PaymentIntent retrieve, which is how the gateway resumes there).
 */
export type FaultOp = 'create' | 'authorize' | 'capture' | 'refund' | 'void' | 'release' | 'resume' | 'any';
/**
 * `rate_limited`: the provider's 429, sent before anything is processed (after `latencyMs`, when given).
 * `release_refused`: the provider refuses the cancel or refund as invalid (Stripe 400, Adyen 422),
 * nothing processed; `release_fail_later`: the provider accepts it (Adyen `received`, a Stripe
 * refund `pending`) but does not perform it, and its event says it failed. Meant for op `release`.
 * `already_done`: performs the operation and drops the answer, as accept_then_drop, but stores no
 * answer under the key (the first response never stored): a same-key resend runs again against the
 * new state and gets the provider's "already in that state" answer instead of the replay (Stripe 400
 * payment_intent_unexpected_state / charge_already_refunded, Adyen a failed CANCELLATION / CAPTURE).
 * Meant for ops void and capture (a partial refund run again would refund again, as live would).
 */
export type FaultMode = 'error_503' | 'reset_before_processing' | 'accept_then_drop' | 'latency' | 'rate_limited' | 'release_refused' | 'release_fail_later' | 'already_done' | ReversalMode;

/**
 * A capture or refund performed, then reversed at once by the provider (Adyen CAPTURE_FAILED /
 * REFUND_FAILED, Stripe refund.failed), its failure event delivered before the success, after it,
 * or twice (before and after). Meant for ops capture and refund. `reverse_before_then_drop`: as
 * `reverse_before`, and the answer is lost (the connection reset after processing): a release
 * refund whose caller never learns its id, then reversed, its failure events before its success
 * (chaos fault release_reversed_first).
 */
export type ReversalMode = 'reverse_before' | 'reverse_after' | 'reverse_twice' | 'reverse_before_then_drop';

export interface FaultSpec {
  readonly op: FaultOp;
  readonly mode: FaultMode;
  readonly count: number;
  readonly latencyMs?: number;
  readonly process?: 'before' | 'after';
}

export interface WebhookSettings {
  readonly enabled: boolean;
  /** Probability in [0, 1] that an event is delivered twice. */
  readonly duplicate: number;
  readonly reorder: boolean;
  readonly delayMs: number;
}

/** An entry's amounts in the provider's own units, as its API received them (Adyen: its decimals). */
export interface ReceivedAmounts {
  readonly currency: string;
  /** How many decimals the provider reads into these values. */
  readonly decimals: number;
  readonly amount: number;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
}

/** Amounts are ISO 4217 minor units, whatever the provider's decimals: comparable with the gateway's. */
export interface SandboxLedgerEntry {
  readonly id: string;
  /** The Switchyard attempt id the payment was created with. */
  readonly reference: string;
  /** The Switchyard payment id, when the provider carries it (Stripe: metadata.payment_id). */
  readonly payment_id?: string;
  readonly status: string;
  readonly amount: number;
  readonly currency: string;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
  readonly cancelled: boolean;
  readonly created_at: string;
  /**
   * Customer authentication, when the provider asked for it: when it asked, and when and how the
   * customer finished on the provider's page (null: never). Seconds-precise ISO times of the provider's clock.
   */
  readonly authentication?: { readonly asked_at: string; readonly completed_at: string | null; readonly outcome: 'completed' | 'failed' | null };
  /** Set where the provider's decimals differ from ISO's for some currency (Adyen). */
  readonly received?: ReceivedAmounts;
}

export interface SandboxControl {
  readonly account: string;
  readonly type: string;
  /** Base URL of the provider listener (never the control API's). */
  readonly url: string;
  /** Queued in the sandbox database: the next matching request gets it, whichever process serves it. */
  scheduleFault(spec: FaultSpec): Promise<number>;
  /** scheduleFault, saying the fault's id too (GET .../faults lists it under that id). */
  scheduleFaultTracked(spec: FaultSpec): Promise<{ readonly scheduled: number; readonly id: number }>;
  /** Drops every queued fault; returns the firings that were still pending. */
  clearFaults(): Promise<number>;
  /** The queued faults, fired or not, with the idempotency keys of the requests each one hit. */
  faults(): Promise<readonly { readonly id: number; readonly op: string; readonly mode: string; readonly remaining: number; readonly hitKeys: readonly string[] }[]>;
  /** Closes this process's provider listener and destroys open connections for `seconds`; 0 ends an outage. */
  outage(seconds: number): Promise<void>;
  ledger(): Promise<readonly SandboxLedgerEntry[]>;
  configureWebhooks(settings: Partial<WebhookSettings>): Promise<void>;
  /** Ages idempotency keys, holds and reports (the account's clock, shared by every process). */
  advanceClock(seconds: number): Promise<void>;
  /** How long this account keeps a finished idempotency key, in ms (null: the provider's own lifetime). */
  setKeyLifetime(ms: number | null): Promise<void>;
  /**
   * Raw card data (Stripe's payment_method_data[card], Adyen's scheme number) accepted from now on,
   * or refused as the provider refuses an account without it; enabled by default. Kept in the account's settings.
   */
  configureRawCardData(enabled: boolean): Promise<void>;
  /** HTTP requests that reached this process's provider listener (faulted or not) since it started. */
  requestsReceived(): number;
  /** The most provider requests answered at once since start. */
  maxInFlight(): number;
  /** PEM of the TLS certificate, for sandboxes that serve HTTPS. */
  readonly caPem?: string;
  /**
   * Providers with a cancel by merchant reference (Adyen's technical cancel): whether an
   * authorization already in flight when the cancel arrives is still `cancelled` or `authorised`.
   */
  configureTechnicalCancel?(inFlight: 'cancelled' | 'authorised'): Promise<void>;
  /**
   * Opens a chargeback on a captured payment, named by the provider's own reference (Stripe's
   * PaymentIntent, Adyen's pspReference), with the provider's own first dispute events; answers the
   * dispute's reference at the provider. Throws RangeError when the payment cannot be disputed.
   */
  openDispute(paymentRef: string, options?: { readonly amount?: number; readonly reason?: string }): Promise<{ readonly id: string }>;
  /**
   * The issuer decides a chargeback the merchant defended (evidence submitted): won or lost, told
   * by the provider's own events. Throws RangeError for a dispute that is not waiting for it.
   */
  decideDispute(disputeRef: string, outcome: 'won' | 'lost'): Promise<void>;
  /** Providers that announce reports (Adyen REPORT_AVAILABLE): announces those due; answers the file names. */
  announceReports?(options?: { readonly except?: readonly string[] }): Promise<string[]>;
  close(): Promise<void>;
}
