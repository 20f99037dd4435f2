// What the Stripe sandbox knows: PaymentIntents, charges, refunds and disputes as mutable records,
// and the ledger derived from them — the ground truth the chaos checks compare the gateway with.

import type { SandboxLedgerEntry } from '../shared/control.ts';
import { isoLedgerAmounts } from './currencies.ts';
import type { StripeErrorBody } from './errors.ts';
import type { SandboxCard } from './test-payment-methods.ts';

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

export type CaptureMethod = 'automatic' | 'automatic_async' | 'manual';

export interface PaymentIntentRecord {
  readonly id: string;
  readonly created: number;
  readonly clientSecret: string;
  amount: number;
  currency: string;
  captureMethod: CaptureMethod;
  status: PaymentIntentStatus;
  paymentMethod: string | null;
  metadata: Record<string, string>;
  description: string | null;
  amountCapturable: number;
  amountReceived: number;
  latestCharge: string | null;
  lastPaymentError: StripeErrorBody | null;
  canceledAt: number | null;
  cancellationReason: string | null;
  requestMulticapture: boolean;
  /** Set while requires_action (absent in documents written before it existed). */
  nextAction?: NextActionRecord | null;
  /** The hosted authentication page's token (part of its URL; never the client secret). */
  authenticationToken?: string | null;
  /** The Customer given at creation (absent in documents written before customers existed). */
  customer?: string | null;
  /** The test PaymentMethod whose card a saved PaymentMethod holds, or the id of rawCard (absent: paymentMethod is one). */
  card?: string | null;
  /** The PaymentMethod made from raw card data (payment_method_data[card]): brand, last 4, expiry, fingerprint; never the number. */
  rawCard?: SandboxCard | null;
  /** The provider's own record of customer authentication (epoch seconds), absent when it never asked. */
  authentication?: { askedAt: number; completedAt: number | null; outcome: 'completed' | 'failed' | null };
}

/** Stripe's next_action: use_stripe_sdk without a return_url, redirect_to_url with one. */
export type NextActionRecord =
  | { readonly type: 'use_stripe_sdk' }
  | { readonly type: 'redirect_to_url'; readonly redirect_to_url: { readonly url: string; readonly return_url: string } };

export interface ChargeRecord {
  readonly id: string;
  readonly created: number;
  readonly paymentIntent: string;
  readonly amount: number;
  readonly currency: string;
  /** The card charged, as kept: never its number (absent from charges written since raw card data). */
  readonly card: SandboxCard;
  readonly status: 'succeeded' | 'failed';
  readonly failure: { readonly code: string; readonly declineCode: string | null; readonly message: string } | null;
  readonly metadata: Record<string, string>;
  /** What the issuer approved: the amount, or less for a partial authorization; 0 when failed. */
  readonly amountAuthorized: number;
  readonly multicapture: 'available' | 'unavailable';
  amountCaptured: number;
  amountRefunded: number;
  captured: boolean;
  captureCount: number;
  disputed: boolean;
  readonly refunds: string[];
}

export interface CustomerRecord {
  readonly id: string;
  readonly created: number;
  readonly email: string | null;
  readonly metadata: Record<string, string>;
}

/** A PaymentMethod attached to a Customer: a copy of a test PaymentMethod's card under a new id, as live makes it. */
export interface SavedPaymentMethodRecord {
  readonly id: string;
  readonly created: number;
  readonly customer: string;
  /** The test PaymentMethod (pm_card_…) whose card and behaviour it has. */
  readonly card: string;
}

export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface RefundRecord {
  readonly id: string;
  readonly created: number;
  readonly charge: string;
  readonly paymentIntent: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string | null;
  readonly metadata: Record<string, string>;
  status: RefundStatus;
  failureReason: string | null;
}

export interface DisputeRecord {
  readonly id: string;
  readonly created: number;
  readonly charge: string;
  readonly paymentIntent: string;
  readonly amount: number;
  readonly currency: string;
  readonly reason: string;
  status: string;
  /** The evidence given so far (text, or a file id for a file field); absent before any. */
  evidence?: Record<string, string>;
  /** Times the evidence was submitted to the bank (0 or 1: a submission is final). */
  submissionCount?: number;
}

/** An uploaded file (files.ts): what it is, never its bytes. */
export interface FileRecord {
  readonly id: string;
  readonly created: number;
  readonly purpose: string;
  /** pdf, jpg or png: what the bytes are. */
  readonly type: string;
  readonly size: number;
  readonly filename: string;
  readonly sha256: string;
}

/** A movement of the account's balance (GET /v1/balance_transactions): what Stripe books, at the time it books it. */
export interface BalanceTransactionRecord {
  readonly id: string;
  readonly created: number;
  readonly paymentIntent: string;
  /** The charge, refund or dispute that moved the balance. */
  readonly source: string;
  readonly type: 'charge' | 'refund' | 'refund_failure' | 'adjustment';
  readonly reportingCategory: 'charge' | 'refund' | 'refund_failure' | 'dispute' | 'dispute_reversal';
  /** Signed, in Stripe's units of the currency. */
  readonly amount: number;
  readonly currency: string;
  /** Stripe's fee on the transaction (a dispute fee), same units; < 0 when returned. Absent: 0. */
  readonly fee?: number;
}

/** An event as sent (GET /v1/events reads them back): its id, time and exact body. */
export interface LoggedEvent {
  readonly id: string;
  readonly created: number;
  readonly type: string;
  readonly body: string;
}

export class StripeSandboxState {
  readonly paymentIntents = new Map<string, PaymentIntentRecord>();
  readonly charges = new Map<string, ChargeRecord>();
  readonly refunds = new Map<string, RefundRecord>();
  readonly disputes = new Map<string, DisputeRecord>();
  readonly balanceTransactions = new Map<string, BalanceTransactionRecord>();
  readonly customers = new Map<string, CustomerRecord>();
  readonly savedPaymentMethods = new Map<string, SavedPaymentMethodRecord>();
  readonly files = new Map<string, FileRecord>();
  /** Loaded only for GET /v1/events, newest first. */
  events: readonly LoggedEvent[] = [];

  chargesOf(paymentIntentId: string): ChargeRecord[] {
    return [...this.charges.values()].filter((c) => c.paymentIntent === paymentIntentId);
  }

  /** In ISO minor units, with the wire amounts (Stripe's decimals) beside them. */
  ledger(): SandboxLedgerEntry[] {
    return [...this.paymentIntents.values()].map((pi) => {
      const charges = this.chargesOf(pi.id).filter((c) => c.status === 'succeeded');
      const refunded = charges
        .flatMap((c) => c.refunds)
        .map((id) => this.refunds.get(id))
        .filter((r): r is RefundRecord => r !== undefined && (r.status === 'succeeded' || r.status === 'pending'))
        .reduce((sum, r) => sum + r.amount, 0);
      const received = {
        amount: pi.amount,
        authorized: charges.reduce((sum, c) => sum + c.amountAuthorized, 0),
        captured: charges.reduce((sum, c) => sum + c.amountCaptured, 0),
        refunded,
      };
      return {
        id: pi.id,
        reference: pi.metadata['attempt_id'] ?? '',
        ...(pi.metadata['payment_id'] !== undefined && { payment_id: pi.metadata['payment_id'] }),
        status: pi.status,
        ...isoLedgerAmounts(received, pi.currency),
        currency: pi.currency,
        cancelled: pi.status === 'canceled',
        created_at: new Date(pi.created * 1000).toISOString(),
        ...(pi.authentication !== undefined && {
          authentication: {
            asked_at: new Date(pi.authentication.askedAt * 1000).toISOString(),
            completed_at: pi.authentication.completedAt === null ? null : new Date(pi.authentication.completedAt * 1000).toISOString(),
            outcome: pi.authentication.outcome,
          },
        }),
      };
    });
  }
}
