// The connector contract. A connector translates between the gateway and one provider: it owns no
// state and no retries, returns CallOutcome values, and throws only for programming errors.

import type { CallOutcome, DeclineClass, NotSentReason, UnknownReason } from '../core/outcome.ts';
import type { ConnectorCapabilities, ConnectorPolicy } from '../core/policy.ts';

export type { CallOutcome } from '../core/outcome.ts';
export type { ConnectorCapabilities, ConnectorPolicy } from '../core/policy.ts';

/**
 * A stored provider token as the merchant gives it (snake case, as the API takes it), or a bare
 * token string (a one-off Stripe PaymentMethod). Each provider reads the fields it uses and its
 * factory's tokenProblem says what one lacks: Stripe {payment_method, customer?}, Adyen
 * {stored_payment_method_id, shopper_reference}.
 */
export type PaymentToken = string | {
  readonly payment_method?: string | undefined;
  readonly customer?: string | undefined;
  readonly stored_payment_method_id?: string | undefined;
  readonly shopper_reference?: string | undefined;
};

export interface PaymentMethodInput {
  /** Provider token for this connector account. */
  readonly token?: PaymentToken;
  /** Sandbox only: a Stripe documented test card number, translated by each connector. */
  readonly testCard?: string;
  /**
   * A vaulted card, revealed by the vault for this one provider call (issue 44): Stripe sends it as
   * payment_method_data[card], Adyen as paymentMethod {type: scheme}. Never logged, stored or queued.
   */
  readonly card?: ConnectorCard;
}

/** A card number as the provider call needs it: only ever in memory, for the call that sends it. */
export interface ConnectorCard {
  /** The vault's payment method id (pmd_…): what logs and errors may name instead of the card. */
  readonly paymentMethodId: string;
  readonly number: string;
  readonly expMonth: number;
  /** Four digits. */
  readonly expYear: number;
  /** Null once the vault forgot it (after the first authorization response, or an hour). */
  readonly cvc: string | null;
  readonly holderName: string | null;
}

export interface AuthorizeRequest {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly amount: number; // minor units
  readonly currency: string; // upper-case ISO 4217
  readonly captureMethod: 'manual' | 'automatic';
  readonly paymentMethod: PaymentMethodInput;
  readonly idempotencyKey: string;
  /**
   * Provider reference from a preparatory call (Stripe PaymentIntent id): set only for an attempt
   * that was prepared (payments persisted in Stripe's former two-call shape); null otherwise, also
   * when a lookup has since found the provider's object, so a resend repeats the first request exactly.
   */
  readonly providerRef: string | null;
  /** Customer authentication: absent on payments created without these settings (automatic, no return URL). */
  readonly authentication?: AuthenticationRequest;
}

/** What a provider needs to authenticate the customer (3-D Secure by redirect). */
export interface AuthenticationRequest {
  readonly mode: 'automatic' | 'challenge' | 'none';
  /** Step-up retry: ask for authentication whatever the provider's own rules say. */
  readonly forced: boolean;
  /** The gateway's return endpoint for this attempt (where the provider's page sends the browser), or null without a merchant return_url. */
  readonly returnUrl: string | null;
  /** The origin of the merchant's return_url (Adyen web 3-D Secure `origin`). */
  readonly origin: string | null;
  readonly browserInfo: BrowserInfo | null;
  readonly shopperIp: string | null;
}

/** The shopper's browser, as Adyen's v72 BrowserInfo names it (the API takes it in snake case). */
export interface BrowserInfo {
  readonly userAgent: string;
  readonly acceptHeader: string;
  readonly language: string;
  readonly colorDepth: number;
  readonly screenHeight: number;
  readonly screenWidth: number;
  readonly timeZoneOffset: number;
  readonly javaEnabled: boolean;
  readonly javaScriptEnabled?: boolean;
}

/**
 * The customer came back from the provider's authentication page: ask the provider for the result
 * (Stripe: retrieve the PaymentIntent; Adyen: /payments/details with the redirectResult kept from the
 * return). Same key on every send of one resume operation.
 */
export interface ResumeRequest {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly providerRef: string | null;
  readonly amount: number;
  readonly currency: string;
  readonly idempotencyKey: string;
  /** What the provider's page sent back (only the fields the provider documents for the resume). */
  readonly returned: Readonly<Record<string, string>>;
}

/**
 * What a customer's return from the provider's page proves. ok: it carries the provider's evidence
 * for this attempt, and `keep` is all the resume reads of it (stored on the attempt); otherwise the
 * return resumes nothing (a forged or stray request: the gateway answers a static page).
 */
export type CustomerReturnReading =
  | { readonly ok: true; readonly keep: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly why: string };

export type PrepareRequest = Omit<AuthorizeRequest, 'providerRef'>;

export interface CaptureRequest {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly captureId: string;
  readonly providerRef: string;
  readonly amount: number;
  readonly currency: string;
  /** False keeps the remainder capturable (multicapture only). */
  readonly final: boolean;
  /** Captured on this authorization before this capture (multicapture): lets the connector check the provider's cumulative echo. */
  readonly alreadyCaptured?: number;
  readonly idempotencyKey: string;
}

export interface VoidRequest {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly providerRef: string;
  readonly amount: number;
  readonly currency: string;
  readonly idempotencyKey: string;
  /**
   * Our reference for this cancel, where it must name more than the attempt (a release round,
   * `<attempt>_release[_<round>]`): a connector whose provider echoes a modification's reference in
   * its events sends it, so each event names its round. Absent: the attempt id.
   */
  readonly reference?: string;
}

export interface RefundRequest {
  readonly paymentId: string;
  readonly attemptId: string;
  readonly refundId: string;
  readonly providerRef: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string | null;
  readonly idempotencyKey: string;
  /** As VoidRequest.reference: a release refund's round (its refundId), echoed by the provider's events. */
  readonly reference?: string;
}

export interface QueryRequest {
  readonly attemptId: string;
  /** The provider's reference when known; otherwise the merchant reference (= attempt id). */
  readonly providerRef: string | null;
  readonly amount: number;
  readonly currency: string;
  /**
   * When the first send of the authorization was written (a little before it left), for a lookup by
   * merchant reference (capabilities.queryByMerchantReference): the provider's object cannot be older.
   */
  readonly sentAt?: string | null;
}

/**
 * Read back one operation's provider object after the provider answered that it was already done
 * (unknown{already_done}): `cancel` (a void, a fence, a release by cancel), `capture`, `refund` (a
 * refund or a release refund, by our refund id). The answer is in the operation's terms: succeeded
 * (the object shows it done, by this operation), declined (it can no longer happen), pending, or
 * unknown when the object does not settle it — never a guess.
 */
export interface OperationLookupRequest {
  readonly kind: 'cancel' | 'capture' | 'refund';
  readonly paymentId: string;
  readonly attemptId: string;
  /** The authorization's provider reference (Stripe PaymentIntent id). */
  readonly providerRef: string;
  readonly amount: number;
  readonly currency: string;
  readonly captureId?: string;
  /** capture: what earlier captures of this authorization took (the provider's total includes it). */
  readonly alreadyCaptured?: number;
  readonly refundId?: string;
}

export interface CancelByReferenceRequest {
  readonly attemptId: string; // the merchant reference the payment was sent with
  readonly idempotencyKey: string;
}

/** A provider webhook event after verification, in the gateway's terms. */
export type NormalizedEvent = {
  readonly providerEventId: string;
  readonly connectorType: string;
  /** The Switchyard attempt id, from metadata or the merchant reference. */
  readonly attemptId: string | null;
  readonly providerRef: string | null;
  readonly occurredAt: string;
  readonly rawType: string;
  /** A report the provider announced (Adyen REPORT_AVAILABLE), its file name already accepted by the connector. */
  readonly report?: AnnouncedReport;
} & (
  | { readonly kind: 'authorization'; readonly outcome: CallOutcome }
  | { readonly kind: 'capture_succeeded' | 'capture_failed' | 'capture_reversed'; readonly amount: number; readonly currency: string; readonly modificationRef: string | null }
  /**
   * modificationRef: the cancel's own id, where the provider keeps one per cancel (Adyen); ourRef:
   * the reference we sent on it, as the provider echoes it (Adyen's modification merchantReference).
   */
  | { readonly kind: 'void_succeeded' | 'void_failed'; readonly modificationRef?: string | null; readonly ourRef?: string | null }
  /**
   * The provider refused a capture or a void because the payment is already captured / cancelled
   * (Adyen: CAPTURE or CANCELLATION success=false with such a reason): unknown{already_done} for
   * that operation, never its failure.
   */
  | { readonly kind: 'already_done'; readonly op: 'capture' | 'void'; readonly amount: number; readonly currency: string; readonly modificationRef: string | null; readonly detail: string }
  | { readonly kind: 'fence_confirmed' | 'fence_refused' }
  /** ourRef: our refund id on the provider's refund, as echoed (Stripe `metadata.refund_id`, Adyen's modification merchantReference). */
  | { readonly kind: 'refund_succeeded' | 'refund_failed' | 'refund_reversed'; readonly amount: number; readonly currency: string; readonly modificationRef: string | null; readonly ourRef?: string | null }
  /**
   * What the provider has refunded of the payment in all (Stripe's charge.refunded: `amount_refunded`;
   * the charge no longer embeds its refunds). It names no refund: it settles one only when it is the
   * only way to read it (event-mapping.ts); the refund events name each refund.
   */
  | { readonly kind: 'refund_total'; readonly amount: number; readonly currency: string }
  /** evidenceDueBy: when the merchant's time to answer ends (ISO 8601), where the event says (Stripe evidence_details.due_by, Adyen defensePeriodEndsAt). */
  | { readonly kind: 'dispute'; readonly disputeRef: string; readonly amount: number; readonly currency: string; readonly reason: string | null; readonly fact: DisputeFact; readonly evidenceDueBy?: string | null }
  | { readonly kind: 'ignored' }
);

/**
 * A dispute event as the provider said it, for its lifecycle (src/connectors/<type>/dispute-lifecycle.ts)
 * to decide against the dispute as recorded: one event means different things at different stages.
 */
export type DisputeFact =
  | { readonly provider: 'adyen'; readonly eventCode: string; readonly disputeStatus: string | null }
  | { readonly provider: 'stripe'; readonly eventType: string; readonly status: string; readonly balanceTransactions: readonly DisputeBalanceTransaction[] };

/** A Stripe balance transaction of a dispute, in gateway minor units: amount signed (< 0 withdrawn), fee > 0 charged. */
export interface DisputeBalanceTransaction {
  readonly id: string;
  readonly amount: number;
  readonly fee: number;
  readonly currency: string;
}

export type WebhookVerification =
  | { readonly ok: true; readonly events: readonly NormalizedEvent[] }
  | { readonly ok: false; readonly status: 400 | 401; readonly reason: string };

export interface ReconciliationRecord {
  readonly providerRef: string;
  readonly attemptId: string | null;
  readonly status: string;
  readonly amount: number;
  readonly currency: string;
  readonly authorized: number;
  readonly captured: number;
  readonly refunded: number;
  readonly createdAt: string;
  /** An open chargeback/dispute the provider shows (reconciliation spots disputes we were never told about). */
  readonly disputed?: boolean;
  /** Modification references of captures the provider reports failed after success (Adyen CAPTURE_FAILED). */
  readonly failedCaptures?: readonly string[];
  /** Refunds the provider took back after they succeeded (returned, failed late), in total; already out of `refunded`. */
  readonly refundsReturned?: number;
}

/** One money-moving row of a provider's settlement report, in minor units. */
export interface SettlementLine {
  /** Stable across downloads of the same report: what makes a re-import post nothing. */
  readonly lineId: string;
  /** The payment's reference at the provider, and our attempt id when the row carries it. */
  readonly providerRef: string;
  readonly attemptId: string | null;
  readonly modificationRef: string | null;
  /** The provider's row type (Adyen: Settled, Refunded, Chargeback, ChargebackReversed, RefundedReversed, CaptureFailed…). */
  readonly type: string;
  readonly currency: string;
  /** Signed: positive when the provider credits us, negative for a debit. */
  readonly gross: number;
  /** The provider's commission on the row (>= 0); the bank receives gross - fee. */
  readonly fee: number;
  readonly bookedAt: string;
  readonly batch: string;
}

/** What a connector makes of an announced report file name: null for a name it does not accept. */
export interface AnnouncedReport {
  readonly fileName: string;
  readonly kind: 'settlement_batch' | 'accounting_daily';
  /** The settlement batch number (gaps are missing reports). */
  readonly sequence: number | null;
  /** The calendar day (account zone) a daily report covers. */
  readonly day: string | null;
}

export interface ProviderReports {
  accepts(fileName: string): AnnouncedReport | null;
  /**
   * Downloads an accepted report by name from the configured origin; null when it is not there
   * (yet). A refused credential throws an error with `setting` (the config path of the credential).
   */
  download(fileName: string): Promise<string | null>;
  /** Every money-moving row of one downloaded report (nothing for a report that holds none). */
  settlementLines(report: { readonly name: string; readonly text: string }): readonly SettlementLine[];
  /**
   * Reconciliation records from downloaded daily status reports (Adyen: payments accounting
   * reports), the window's days and the history days before them.
   */
  records(reports: readonly { readonly name: string; readonly text: string }[], window: ReconciliationWindow): readonly ReconciliationRecord[];
  /** How many days before a window the records need for a payment's whole history. */
  readonly historyDays: number;
  /** When a daily report's day (YYYY-MM-DD, the account's zone) ends, epoch ms. */
  dayEndMs(day: string): number;
  /** How long after its day (or after the next batch) a report may be missing before it is a finding. */
  readonly missingGraceMs: number;
}

export interface AttemptLookup {
  readonly attemptId: string;
  readonly providerRef: string | null;
  /** When the attempt was created: a list looks around it. */
  readonly createdAt: Date;
}

export interface ReconciliationWindow {
  readonly from: Date;
  readonly to: Date;
}

/**
 * Failure situations every connector classifies. The kit drives each one for real against the
 * connector's sandbox, so a row is a promise the connector keeps, not documentation.
 */
export const FAILURE_SITUATIONS = [
  'connection_refused', // every attempt failed before connecting (ECONNREFUSED / ENOTFOUND / EAI_AGAIN / TLS)
  'validation', // 400 / 422 invalid request
  'authentication', // 401
  'permission', // 403
  'rate_limited', // 429
  'card_declined', // the issuer or the provider's risk engine said no
  'idempotency_mismatch', // same key, other parameters
  'in_progress', // 409: the same key is still being processed
  'server_error', // 5xx
  'connection_reset', // ECONNRESET / EPIPE on any attempt, or any attempt that connected and got no answer
  'timeout', // no answer within the timeout after sending
  'truncated_body', // headers arrived, the body did not
  'unparseable', // a body that is not the provider's format
  'already_done', // refused because the object is already in the state the operation would put it in (cancelled, captured, refunded)
] as const;
export type FailureSituation = (typeof FAILURE_SITUATIONS)[number];

/** One row of a connector's normative error-classification table (docs/connectors.md; checked by the kit). */
export type ErrorClassificationRow = {
  readonly situation: FailureSituation;
  /** What the provider shows in this situation, for people. */
  readonly signal: string;
} & (
  | { readonly outcome: 'not_sent'; readonly reason: NotSentReason }
  | { readonly outcome: 'unknown'; readonly reason: UnknownReason; readonly alert?: boolean }
  | { readonly outcome: 'declined'; readonly reason: 'decline_table' }
);

export interface DeclineRule {
  readonly class: DeclineClass;
  readonly retryElsewhere: boolean;
}

/** Decline classification, keyed by provider code; comes from the config file over the connector's defaults. */
export type DeclineTable = Readonly<Record<string, DeclineRule>>;

/** One connector account as the routing config describes it; `settings` is validated by the connector's factory. */
export interface ConnectorAccountConfig {
  readonly type: string;
  /** A sandbox / test-mode account: only these accept the gateway's test cards. */
  readonly sandbox: boolean;
  /** Merged over the connector's shipped defaults (config wins per code). */
  readonly declineTable?: DeclineTable;
  /** Overrides the connector's declared key retention, in ms (never longer than the provider honours). */
  readonly keyRetentionMs?: number;
  /** How long a customer may take at this connector's authentication page, in ms (absent: the core's 15 min). */
  readonly authenticationTimeoutMs?: number;
  readonly settings: Readonly<Record<string, unknown>>;
}

/** Builds connectors of one provider type; registry.ts holds one per type. */
export interface ConnectorFactory {
  readonly type: string;
  /** Throws ConnectorConfigError naming the path of every invalid setting (a load-time programming error). */
  create(account: string, config: ConnectorAccountConfig): Connector;
  /**
   * Why this provider cannot take an amount in gateway (ISO) minor units — its exponent for the
   * currency has no room for it (IDR 1234550 for Adyen's whole rupiah) or it has no such currency —
   * or null. Pure: the router asks it before choosing, the connector refuses the same before sending.
   */
  amountProblem(amount: number, currency: string): string | null;
  /** What a token lacks for this provider (the API refuses it, naming the account), or null. Pure. */
  tokenProblem(token: PaymentToken): string | null;
  /** Its connectors take a vaulted card's number (capabilities.acceptsCardData): routing asks before choosing. */
  readonly acceptsCardData?: boolean;
}

export class ConnectorConfigError extends Error {
  override readonly name = 'ConnectorConfigError';
}

/**
 * How a merchant answers a dispute at this provider (issue 48): what it accepts, and the calls. Every
 * call throws DisputeCallError when it did not succeed; the gateway writes its own records only after.
 */
export interface DisputeOperations {
  /** What the provider accepts for this dispute now (Adyen asks per dispute; Stripe's fields are fixed). */
  defenseOptions(disputeRef: string): Promise<DisputeDefenseOptions>;
  /** Sends the evidence: each file to the provider, then the fields (and, on submit, the defense). */
  submitEvidence(req: DisputeEvidenceRequest): Promise<void>;
  /** The merchant does not defend: the dispute is lost (an inquiry closed). */
  accept(disputeRef: string, idempotencyKey: string): Promise<void>;
}

export interface DisputeDefenseOptions {
  /** Defense reasons with their document types (Adyen); none where the provider has no reasons (Stripe). */
  readonly reasons: readonly DisputeDefenseReason[];
  /** Evidence given as text (Stripe's text fields); none at Adyen. */
  readonly textFields: readonly string[];
  /** Evidence given as a file, by type (Stripe's file fields); Adyen's types are per reason. */
  readonly fileTypes: readonly string[];
}

export interface DisputeDefenseReason {
  readonly code: string;
  /** The provider holds enough documents for it already. */
  readonly satisfied: boolean;
  readonly documentTypes: readonly { readonly code: string; readonly requirement: string; readonly supplied: boolean }[];
}

export interface DisputeEvidenceFile {
  /** The gateway's file (file_…): names it in errors and provider keys. */
  readonly fileId: string;
  /** The evidence field (Stripe) or defense document type code (Adyen) it is given as. */
  readonly type: string;
  readonly contentType: string;
  readonly bytes: Buffer;
}

export interface DisputeEvidenceRequest {
  readonly disputeRef: string;
  readonly defenseReason: string | null;
  readonly fields: Readonly<Record<string, string>>;
  readonly files: readonly DisputeEvidenceFile[];
  readonly submit: boolean;
  /**
   * The base of every provider idempotency key of this request (at most 48 characters): each call
   * adds its own suffix, so a retry of the same request repeats the same calls under the same keys.
   */
  readonly idempotencyKey: string;
}

/** A dispute call that did not succeed: `refused` when the provider said no (retrying will not help), otherwise its answer is unknown. */
export class DisputeCallError extends Error {
  override readonly name = 'DisputeCallError';
  constructor(
    readonly refused: boolean,
    message: string,
  ) {
    super(message);
  }
}

export interface Connector {
  readonly type: string;
  readonly account: string;
  /** Test-mode account: accepts PaymentMethodInput.testCard. */
  readonly sandbox: boolean;
  readonly capabilities: ConnectorCapabilities;
  readonly policy: ConnectorPolicy;
  readonly errorClassification: readonly ErrorClassificationRow[];
  /** The effective decline table: the connector's defaults with the account config merged over them. */
  readonly declineTable: DeclineTable;

  /**
   * Preparatory call that moves no money (Stripe: create the PaymentIntent). New attempts use it only
   * when capabilities.preparesAuthorization; a connector that stopped preparing keeps it for attempts
   * persisted while it still did (Stripe since issue 26).
   */
  prepare?(req: PrepareRequest): Promise<CallOutcome>;
  authorize(req: AuthorizeRequest): Promise<CallOutcome>;
  capture(req: CaptureRequest): Promise<CallOutcome>;
  void(req: VoidRequest): Promise<CallOutcome>;
  refund(req: RefundRequest): Promise<CallOutcome>;
  /**
   * The current truth of an authorization. A reference the provider does not know: unknown{not_found}.
   * With providerRef null, only a connector declaring queryByMerchantReference looks the attempt up by id.
   */
  query(req: QueryRequest): Promise<CallOutcome>;
  /**
   * The provider object of a capture, void or refund answered "already done" (absent: the provider
   * has nothing to read it back by — Adyen — and its notification settles the operation instead).
   */
  lookupOperation?(req: OperationLookupRequest): Promise<CallOutcome>;
  /** Customer authentication: the result after the customer returned (absent: the connector never asks for it). */
  resume?(req: ResumeRequest): Promise<CallOutcome>;
  /**
   * Pure: whether the fields a customer's browser brought back (form body over query, strings only)
   * carry this provider's evidence for the attempt (`providerRef`: its object at the provider), and
   * what of them the resume reads. Every connector with `resume` has it; without it no return resumes.
   */
  readCustomerReturn?(returned: Readonly<Record<string, string>>, attempt: { readonly providerRef: string | null }): CustomerReturnReading;
  /** Only when capabilities.cancelByMerchantReference. */
  cancelByReference?(req: CancelByReferenceRequest): Promise<CallOutcome>;
  verifyWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>, now: Date): WebhookVerification;
  /** Records become available `reconciliationDelayMs` after the fact. */
  readonly reconciliationDelayMs: number;
  /** Absent for a connector whose records come only from the reports its provider announces (`reports`: Adyen). */
  fetchReconciliationRecords?(window: ReconciliationWindow): Promise<readonly ReconciliationRecord[]>;
  /**
   * The provider's record of one attempt as it is now, for an operator about to resolve a payment
   * (Stripe: the PaymentIntent by id, else by listing those created around the attempt); null when
   * none is found — which proves nothing. Absent for providers with no lookup here (Adyen). Throws
   * when the provider could not be asked.
   */
  lookupAttempt?(req: AttemptLookup): Promise<ReconciliationRecord | null>;
  /** Settlement rows booked in the window, for connectors whose provider reports them (Adyen); absent otherwise. */
  fetchSettlementLines?(window: ReconciliationWindow): Promise<readonly SettlementLine[]>;
  /** Reports the provider announces by notification (Adyen REPORT_AVAILABLE); absent otherwise. */
  readonly reports?: ProviderReports;
  /** Answering disputes (evidence, defense, accept); absent for a provider with none here. */
  readonly disputes?: DisputeOperations;
  close(): Promise<void>;
}
