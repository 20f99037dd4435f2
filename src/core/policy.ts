// What a connector declares about itself, as data. The core decides with it; the router filters on it.

export interface ConnectorCapabilities {
  readonly manualCapture: boolean;
  readonly partialCapture: boolean;
  readonly multicapture: boolean;
  /**
   * A final partial capture leaves the uncaptured remainder authorized (Adyen with multiple partial
   * captures): the gateway cancels it after the capture. Absent: the final capture releases it (Stripe).
   */
  readonly finalCaptureLeavesRemainder?: boolean;
  readonly partialRefund: boolean;
  readonly queryByReference: boolean;
  /**
   * The query finds an authorization by our attempt id alone, before the provider's reference is
   * known (Stripe: the PaymentIntent list, matched on metadata.attempt_id). "Not found" is never proof.
   */
  readonly queryByMerchantReference: boolean;
  readonly cancelByMerchantReference: boolean;
  /** Authorize needs a preparatory call that moves no money (Stripe: create the PaymentIntent). */
  readonly preparesAuthorization: boolean;
  /** Capture / void / refund results arrive later by webhook (Adyen: 201 received). */
  readonly asyncModifications: boolean;
  /**
   * A decline after the customer was sent to authenticate leaves the provider's object open (a
   * Stripe PaymentIntent back in requires_payment_method could still be confirmed): it counts as
   * proof only once a cancel is confirmed. Absent: false.
   */
  readonly declineAfterAuthenticationLeavesOpen?: boolean;
  /**
   * Takes a vaulted card's number in the authorization call (PaymentMethodInput.card: Stripe's
   * raw-card API, Adyen's scheme for PCI-compliant accounts). Absent: false, routing skips the
   * connector for a payment paid with a vaulted card.
   */
  readonly acceptsCardData?: boolean;
  /** A vaulted card is refused without its verification code: routing skips it once the code is gone. Absent: false. */
  readonly requiresCardCode?: boolean;
  /**
   * The provider's object of a capture, void or refund can be read back (op `lookup`; Stripe: the
   * PaymentIntent and its charge's refunds). An operation whose outcome stays unknown is then looked
   * up before it parks. Absent: false (Adyen: its notifications and reports settle it instead).
   */
  readonly looksUpOperations?: boolean;
  /**
   * A cancel of a payment the provider has captured is refused, never confirmed (Adyen: CANCELLATION
   * or TECHNICAL_CANCEL success=false): a confirmed cancel proves nothing was captured, so under
   * automatic capture an attempt whose outcome stays unknown may be fenced (and failed over) instead
   * of parked. What it proves nothing about is an authorization still in flight that reaches the
   * provider after the cancel: the fenced attempt stays watched (issue 41 §5). Absent: false.
   */
  readonly cancelRefusedOnceCaptured?: boolean;
}

export interface ConnectorPolicy {
  readonly maxKeyLength: number;
  /** How long the provider honours an idempotency key, in ms. */
  readonly keyRetentionMs: number;
  /** How long an authorization hold lasts before the provider releases it, in ms. */
  readonly authHoldMs: number;
  /** How long a customer may take at this connector's authentication page before the attempt is cancelled; absent: 15 min. */
  readonly authenticationTimeoutMs?: number;
  readonly capabilities: ConnectorCapabilities;
}

/** Gateway-wide limits the core applies to every payment. */
export interface CorePolicy {
  /** Resends of one logical operation that was not sent (same key). */
  readonly maxResends: number;
  /**
   * Release operations (void or refund of an approval we do not keep) per attempt: a release the
   * provider confirms as failed is followed by a new one with a new key, this many in all; past it the
   * payment is parked for review with a release_failed discrepancy. Absent: 3.
   */
  readonly maxReleases?: number;
  /** Queries of an unknown outcome before the payment is fenced or parked. */
  readonly maxQueries: number;
  /** Fence calls (same key) before the payment is parked for review. */
  readonly maxFenceCalls: number;
  /** Margin subtracted from the provider's key retention before a resend is refused. */
  readonly retentionMarginMs: number;
  readonly backoffBaseMs: number;
  readonly backoffCapMs: number;
  /**
   * How long to wait before trying again a call an open breaker refused, when the connector's own
   * breaker reset time is not known (`StepEnv.breakerResetMs` gives it per connector).
   */
  readonly breakerResetMs: number;
  /** Payments still in flight after this long are fenced, then failed (or parked). */
  readonly maxLifetimeMs: number;
  /** Act this long before the auth hold lapses. */
  readonly holdExpiryMarginMs: number;
  /** What to do when an authorization nobody captured nears the end of its hold: void it cleanly, or mark it expired (an alert for the merchant). */
  readonly onHoldExpiry: 'void' | 'expire';
}

export const DEFAULT_CORE_POLICY: CorePolicy = Object.freeze({
  maxResends: 3,
  maxQueries: 8,
  maxFenceCalls: 3,
  retentionMarginMs: 60 * 60 * 1000,
  backoffBaseMs: 1_000,
  backoffCapMs: 15 * 60 * 1000,
  breakerResetMs: 30_000,
  maxLifetimeMs: 72 * 60 * 60 * 1000,
  holdExpiryMarginMs: 6 * 60 * 60 * 1000,
  onHoldExpiry: 'void',
});

export const DEFAULT_AUTHENTICATION_TIMEOUT_MS = 15 * 60 * 1000;
