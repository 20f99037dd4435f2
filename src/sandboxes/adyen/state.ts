// What the Adyen sandbox knows: payments with their modifications, the merchant references that a
// technical cancel fenced, and the ledger derived from them (the ground truth for chaos checks).

import type { SandboxLedgerEntry } from '../shared/control.ts';
import { ledgerAmounts } from './ledger-amounts.ts';

export type AdyenResultCode = 'Authorised' | 'Refused' | 'Error' | 'Cancelled' | 'Received' | 'PartiallyAuthorised' | 'RedirectShopper' | 'IdentifyShopper' | 'ChallengeShopper';

/** The payment waits for the shopper (3-D Secure): RedirectShopper, or a threeDS2 action. */
export const AWAITING_SHOPPER: ReadonlySet<AdyenResultCode> = new Set(['RedirectShopper', 'IdentifyShopper', 'ChallengeShopper']);

/**
 * A payment's 3-D Secure by redirect (authentication.ts). `token` names the challenge page; the
 * shopper's choice there issues `redirectResult`; /payments/details authorises (or refuses) once.
 */
export interface PaymentAuthentication {
  readonly token: string;
  readonly returnUrl: string;
  readonly method: 'GET' | 'POST' | 'threeDS2';
  /** What the issuer does after a completed authentication: approve, or refuse with this code (the 8260 card: 12). */
  readonly thenRefusalCode: string | null;
  /** Set by the shopper's click on the challenge page. */
  redirectResult: string | null;
  completed: boolean | null;
  /** The sandbox clock time of that click (absent on payments stored before it was kept). */
  choiceAtMs?: number | null;
  /** The sandbox clock time of the /payments/details call that settled the payment. */
  detailsAtMs: number | null;
}

export interface AdyenAmount {
  readonly value: number;
  readonly currency: string;
}

export type ModificationKind = 'capture' | 'cancel' | 'refund' | 'reversal' | 'technical_cancel';

export interface ModificationRecord {
  readonly pspReference: string;
  readonly kind: ModificationKind;
  readonly amount: AdyenAmount;
  readonly reference: string | null;
  readonly createdMs: number;
  /** Settled when the notification is built; null while only `received`. */
  success: boolean | null;
  reason: string;
}

export interface PaymentRecord {
  readonly pspReference: string;
  readonly merchantReference: string;
  readonly merchantAccount: string;
  readonly amount: AdyenAmount;
  readonly createdMs: number;
  readonly manualCapture: boolean;
  readonly paymentMethod: string;
  readonly metadata: Readonly<Record<string, string>>;
  resultCode: AdyenResultCode;
  refusalReason: string | null;
  refusalReasonCode: string | null;
  /** What the issuer approved (0 unless authorised). */
  authorised: number;
  captured: number;
  refunded: number;
  cancelled: boolean;
  /** Nothing more can be captured: a partial capture without multiple partial captures, or the remainder cancelled. */
  captureClosed: boolean;
  /** With multiple partial captures: a cancel after a capture released the rest (the payment is not cancelled). */
  remainderCancelled?: boolean;
  readonly modifications: ModificationRecord[];
  /** 3-D Secure (absent on payments that needed none). */
  authentication?: PaymentAuthentication;
  /** A raw card's brand, last 4, expiry and fingerprint (raw-card.ts); never its number or code. Absent for other payment methods. */
  readonly card?: { readonly brand: string; readonly last4: string; readonly expiryMonth: string; readonly expiryYear: string; readonly fingerprint: string };
  /** Disputes of the payment (src/sandboxes/adyen/disputes.ts); absent on payments stored before them. */
  disputes?: AdyenDisputeRecord[];
}

export interface AdyenDisputeRecord {
  /** The dispute's own pspReference, on every event of it. */
  readonly pspReference: string;
  readonly amount: number;
  withdrawn: boolean;
  /** Funds came back once: a later withdrawal is a SecondChargeback row. */
  reversedOnce: boolean;
  final: boolean;
  readonly codes: string[];
  /** When it was opened (sandbox clock): the defense period ends 21 days later. Absent on disputes stored before it was kept. */
  readonly openedMs?: number;
  /** Defense documents supplied (dispute-service.ts): their type code, content type and size, never their bytes. */
  documents?: { readonly type: string; readonly contentType: string; readonly size: number }[];
  /** The defense reason it was defended with (defendDispute); null or absent: not defended. */
  defendedWith?: string | null;
  /** The merchant accepted it (acceptDispute). */
  accepted?: boolean;
}

/** One line of the settlement-details report, booked on the sandbox clock. */
export interface SettlementBooking {
  readonly bookedMs: number;
  /** Authorised / Cancelled rows are a sandbox addition (see docs/sandbox.md): real settlement details carry booked money only. */
  readonly type: 'Authorised' | 'Cancelled' | 'Settled' | 'Refunded' | 'Chargeback' | 'ChargebackReversed' | 'SecondChargeback' | 'RefundedReversed' | 'CaptureFailed';
  readonly payment: PaymentRecord;
  readonly modificationReference: string;
  readonly amount: number;
  /** Commission charged on the row, fixed when it is booked (set by book()). */
  readonly fee?: number;
}

export class AdyenSandboxState {
  readonly payments = new Map<string, PaymentRecord>();
  /** merchant reference -> pspReference of the technical cancel that fenced it. */
  readonly fencedReferences = new Map<string, string>();
  readonly bookings: SettlementBooking[] = [];
  /** Adyen's commission on each Settled row: fixed minor units plus basis points of the gross (default none). */
  commission: { fixed: number; bps: number } = { fixed: 0, bps: 0 };

  latestByReference(merchantReference: string): PaymentRecord | undefined {
    let latest: PaymentRecord | undefined;
    for (const p of this.payments.values()) if (p.merchantReference === merchantReference) latest = p;
    return latest;
  }

  capturable(p: PaymentRecord): number {
    if (p.authorised === 0 || p.cancelled || p.captureClosed) return 0;
    return p.authorised - p.captured;
  }

  book(booking: SettlementBooking): void {
    const { fixed, bps } = this.commission;
    const fee = booking.type === 'Settled' ? Math.min(booking.amount, fixed + Math.floor((booking.amount * bps) / 10_000)) : 0;
    this.bookings.push({ ...booking, fee });
  }

  /** In ISO minor units, with the values as received (Adyen's decimals) beside them. */
  ledger(): SandboxLedgerEntry[] {
    return [...this.payments.values()].map((p) => ({
      id: p.pspReference,
      reference: p.merchantReference,
      ...(p.metadata['payment_id'] !== undefined && { payment_id: p.metadata['payment_id'] }),
      status: p.cancelled ? 'Cancelled' : p.resultCode,
      ...ledgerAmounts(p),
      cancelled: p.cancelled,
      created_at: new Date(p.createdMs).toISOString(),
      ...(p.authentication !== undefined && { authentication: authenticationRecord(p.createdMs, p.authentication) }),
    }));
  }
}

/** How the account answers a payment that needs 3-D Secure (the control API's configureAuthentication). */
export interface AdyenAuthenticationSettings {
  /** The redirect action's method: GET (the token in the url) or POST (MD, PaReq, TermUrl in data). Default GET. */
  readonly redirectMethod: 'GET' | 'POST';
  /** The account answers a threeDS2 action (IdentifyShopper) even when the request disabled native 3-D Secure. */
  readonly forceNative: boolean;
  /**
   * Test mode for the resume's binding: /payments/details answers with the payment's own references
   * (`echo`, the default), another pspReference (`other_psp`), another merchantReference
   * (`other_merchant_reference`), or without its merchantReference (`no_merchant_reference`). The
   * payment is settled, and notified, as usual.
   */
  readonly detailsReferences?: 'echo' | 'other_psp' | 'other_merchant_reference' | 'no_merchant_reference';
}

/** The provider's record of the shopper's authentication for the ledger, in whole seconds (as Stripe's). */
function authenticationRecord(askedMs: number, a: PaymentAuthentication): NonNullable<SandboxLedgerEntry['authentication']> {
  const seconds = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString();
  const at = a.choiceAtMs ?? null;
  return { asked_at: seconds(askedMs), completed_at: at === null ? null : seconds(at), outcome: a.completed === null ? null : a.completed ? 'completed' : 'failed' };
}
