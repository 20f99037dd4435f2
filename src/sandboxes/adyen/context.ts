// What an operation handler gets, and the request-body readers every handler shares.

import { isoMinor } from './currencies.ts';
import { invalidAmount, invalidField, notAllowed, requiredField } from './errors.ts';
import type { NotificationItem } from './notifications.ts';
import type { AdyenAmount, AdyenAuthenticationSettings, AdyenSandboxState } from './state.ts';

export interface AdyenOperationContext {
  readonly state: AdyenSandboxState;
  readonly nowMs: number;
  readonly merchantAccount: string;
  newPspReference(): string;
  /** Queues a notification; it is signed and sent after the operation finished. */
  notify(item: NotificationItem): void;
  /** Fault release_fail_later: a cancel or refund is received but not performed; its notification is success=false. */
  readonly failModification?: boolean;
  /** Where browsers reach the sandbox (the challenge page's origin). */
  readonly publicUrl?: string;
  /** The account's authentication settings (redirect method, native 3-D Secure). */
  readonly authentication?: AdyenAuthenticationSettings;
  /**
   * This /payments was in flight (taken, and held) before any technical cancel of its reference,
   * and the account completes such an authorization after the cancel (inFlightAfterCancel: authorised).
   */
  readonly outrunsFence?: boolean;
  /** Multiple partial captures are enabled on the account: a capture leaves the rest authorized until /cancels. */
  readonly multicapture?: boolean;
  /** Raw card data is allowed for the account's API credential; absent: not allowed. */
  readonly rawCardData?: boolean;
  /** The account's fingerprint of a card number (keyed: the sandbox database never holds the number or an unkeyed hash of it). */
  readonly cardFingerprint?: (number: string) => string;
}

export type JsonObject = Readonly<Record<string, unknown>>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function requiredString(body: JsonObject, field: string, maxLength = 80): string {
  const v = body[field];
  if (v === undefined || v === null || v === '') throw requiredField(field);
  if (typeof v !== 'string') throw invalidField(field, 'must be a string');
  if (v.length > maxLength) throw invalidField(field, `longer than ${maxLength} characters`);
  return v;
}

export function optionalString(body: JsonObject, field: string, maxLength = 80): string | null {
  return body[field] === undefined ? null : requiredString(body, field, maxLength);
}

export function requiredAmount(body: JsonObject, field = 'amount'): AdyenAmount {
  const v = body[field];
  if (v === undefined) throw requiredField(field);
  if (!isObject(v)) throw invalidAmount(`${field} must be an object`);
  const { value, currency } = v;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalidAmount(`${field}.value must be a non-negative integer in minor units`);
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw invalidAmount(`${field}.currency must be an ISO 4217 code`);
  const iso = isoMinor(value, currency); // read with Adyen's decimals, not ISO's
  if (!iso.ok) throw invalidAmount(`${field}: ${iso.problem}`);
  return { value, currency };
}

export function checkMerchantAccount(ctx: AdyenOperationContext, body: JsonObject): string {
  const account = requiredString(body, 'merchantAccount');
  if (account !== ctx.merchantAccount) throw notAllowed(`merchant account ${account} is not linked to this API credential`);
  return account;
}
