// Adyen webhook verification (per-item HMAC, key rotation, basic auth, one bad item rejects the batch),
// the event mapping, the error classification by message (never by ApiException's default 500), and
// the exhaustive resultCode map.

import { describe, expect, it } from 'vitest';
import { ADYEN_DEFAULT_DECLINES } from '../../../../src/connectors/adyen/defaults.ts';
import { outcomeForFailure } from '../../../../src/connectors/adyen/error-classification.ts';
import { hmacValidator } from '../../../../src/connectors/adyen/library.ts';
import { basicAuthorization, notificationBody, signNotificationItem } from '../../../../src/sandboxes/adyen/index.ts';
import type { NotificationItem } from '../../../../src/sandboxes/adyen/index.ts';
import { ADYEN_RESULT_CODES, paymentOutcome } from '../../../../src/connectors/adyen/status-map.ts';
import type { TransportRecord } from '../../../../src/connectors/adyen/transport.ts';
import { verifyAdyenWebhook } from '../../../../src/connectors/adyen/webhook.ts';

const KEY = 'DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00';
const OLD = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const secrets = { hmacKeys: [OLD, KEY], username: 'u', password: 'p' };
const headers = { authorization: basicAuthorization('u', 'p') };

function item(eventCode: string, success: 'true' | 'false', extra: Partial<NotificationItem> = {}): NotificationItem {
  return { amount: { value: 1000, currency: 'EUR' }, eventCode, eventDate: '2026-11-03T10:00:00+01:00', merchantAccountCode: 'M', merchantReference: 'att_1', pspReference: 'MOD1', originalReference: 'PAY1', reason: '', success, ...extra };
}

const verify = (items: readonly NotificationItem[], h: Record<string, string> = headers) => verifyAdyenWebhook(Buffer.from(notificationBody(items)), h, secrets, new Date(), ADYEN_DEFAULT_DECLINES);

describe('adyen notifications', () => {
  it('the sandbox signer reproduces the library test vector and the library validates it', () => {
    expect(new hmacValidator().calculateHmac('pspReference:originalReference:merchantAccount:reference:1000:EUR:REPORT_AVAILABLE:true', KEY)).toBe('ZNBPtI+oDyyRrLyD1XirkKnQgIAlFc07Vj27TeHsDRE=');
    const signed = signNotificationItem(item('CAPTURE', 'true'), KEY);
    expect(new hmacValidator().validateHMAC(signed as never, KEY)).toBe(true);
  });

  it('accepts either key of a rotation; refuses a foreign key, a missing signature, and wrong basic auth', () => {
    expect(verify([signNotificationItem(item('CAPTURE', 'true'), OLD)]).ok).toBe(true);
    expect(verify([signNotificationItem(item('CAPTURE', 'true'), KEY)]).ok).toBe(true);
    expect(verify([signNotificationItem(item('CAPTURE', 'true'), '00'.repeat(32))])).toMatchObject({ ok: false, status: 401 });
    expect(verify([item('CAPTURE', 'true')])).toMatchObject({ ok: false, status: 401 });
    expect(verify([signNotificationItem(item('CAPTURE', 'true'), KEY)], { authorization: basicAuthorization('u', 'x') })).toMatchObject({ ok: false, status: 401 });
  });

  it('one bad item rejects the whole batch', () => {
    const good = signNotificationItem(item('CAPTURE', 'true'), KEY);
    const forged = { ...signNotificationItem(item('REFUND', 'true', { pspReference: 'MOD2' }), KEY), amount: { value: 999999, currency: 'EUR' } };
    expect(verify([good, good])).toMatchObject({ ok: true });
    expect(verify([good, forged])).toMatchObject({ ok: false, status: 401 });
  });

  it('maps every event code the core acts on', () => {
    const kinds = (code: string, success: 'true' | 'false', extra: Partial<NotificationItem> = {}): string => {
      const v = verify([signNotificationItem(item(code, success, extra), KEY)]);
      return v.ok ? (v.events[0]?.kind ?? '') : 'refused';
    };
    expect(kinds('AUTHORISATION', 'true', { pspReference: 'PAY1', originalReference: '' })).toBe('authorization');
    expect(kinds('CAPTURE', 'true')).toBe('capture_succeeded');
    expect(kinds('CAPTURE', 'false')).toBe('capture_failed');
    expect(kinds('CAPTURE_FAILED', 'true')).toBe('capture_reversed');
    expect(kinds('CANCELLATION', 'true')).toBe('void_succeeded');
    expect(kinds('CANCELLATION', 'false')).toBe('void_failed');
    expect(kinds('TECHNICAL_CANCEL', 'true')).toBe('fence_confirmed');
    expect(kinds('TECHNICAL_CANCEL', 'false')).toBe('fence_refused');
    expect(kinds('CANCEL_OR_REFUND', 'true', { additionalData: { 'modification.action': 'refund' } })).toBe('refund_succeeded');
    expect(kinds('CANCEL_OR_REFUND', 'true', { additionalData: { 'modification.action': 'cancel' } })).toBe('void_succeeded');
    expect(kinds('REFUND', 'true')).toBe('refund_succeeded');
    expect(kinds('REFUND', 'false')).toBe('refund_failed');
    expect(kinds('REFUND_FAILED', 'true')).toBe('refund_reversed');
    expect(kinds('REFUNDED_REVERSED', 'true')).toBe('refund_reversed');
    for (const code of ['NOTIFICATION_OF_CHARGEBACK', 'DISPUTE_OPENED_WITH_CHARGEBACK', 'REQUEST_FOR_INFORMATION', 'NOTIFICATION_OF_FRAUD', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'PREARBITRATION_WON', 'PREARBITRATION_LOST', 'ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'INFORMATION_SUPPLIED', 'DISPUTE_DEFENSE_PERIOD_ENDED', 'ISSUER_COMMENTS']) {
      expect(kinds(code, 'true'), code).toBe('dispute');
    }
    expect(kinds('REPORT_AVAILABLE', 'true')).toBe('ignored');
  });

  it('a CAPTURE or CANCELLATION refused as already done is unknown{already_done}, by its exact reason per event code (issue 41 §4)', () => {
    const event = (code: string, reason: string) => {
      const v = verify([signNotificationItem(item(code, 'false', { reason }), KEY)]);
      return v.ok ? v.events[0] : undefined;
    };
    expect(event('CANCELLATION', 'Payment has already been cancelled')).toMatchObject({ kind: 'already_done', op: 'void', providerRef: 'PAY1', attemptId: 'att_1' });
    expect(event('CAPTURE', 'Payment has already been captured')).toMatchObject({ kind: 'already_done', op: 'capture', amount: 1000, currency: 'EUR', modificationRef: 'MOD1' });
    // The same words mean a real refusal under the other code, and other words stay refusals.
    expect(event('CANCELLATION', 'Payment has already been captured')).toMatchObject({ kind: 'void_failed' });
    expect(event('CAPTURE', 'Insufficient balance on payment')).toMatchObject({ kind: 'capture_failed' });
    expect(event('CANCELLATION', 'the payment was already cancelled, we think')).toMatchObject({ kind: 'void_failed' });
  });

  it('a refused AUTHORISATION is declined through the table by its refusal text', () => {
    const v = verify([signNotificationItem(item('AUTHORISATION', 'false', { pspReference: 'PAY1', originalReference: '', reason: 'Not enough balance' }), KEY)]);
    expect(v.ok && v.events[0]).toMatchObject({ kind: 'authorization', attemptId: 'att_1', providerRef: 'PAY1', outcome: { kind: 'declined', code: 'insufficient_funds', providerCode: '12', class: 'soft' } });
  });
});

describe('adyen error classification', () => {
  const record = (o: Partial<TransportRecord> = {}): TransportRecord => ({ requests: 1, secureConnected: false, responseStatus: null, timedOut: false, ...o });
  // The library's ApiException: a plain object, not an Error, statusCode 500 by default.
  const apiException = (message: string) => ({ name: 'ApiException', message, statusCode: 500 });

  it('never reads ApiException.statusCode 500 as a server answer', () => {
    expect(outcomeForFailure(apiException('connect ECONNREFUSED 127.0.0.1:1'), record())).toMatchObject({ kind: 'not_sent', reason: 'connection_refused' });
    expect(outcomeForFailure(apiException('getaddrinfo ENOTFOUND checkout-test.adyen.com'), record())).toMatchObject({ kind: 'not_sent', reason: 'connection_refused' });
    expect(outcomeForFailure(apiException('self-signed certificate'), record())).toMatchObject({ kind: 'not_sent', reason: 'connection_refused' });
    expect(outcomeForFailure(apiException('socket hang up'), record({ secureConnected: true }))).toMatchObject({ kind: 'unknown', reason: 'connection_reset' });
    expect(outcomeForFailure(apiException('socket hang up'), record({ secureConnected: true, timedOut: true }))).toMatchObject({ kind: 'unknown', reason: 'timeout' });
  });

  it('a refused-connection message after TLS was up is not proof', () => {
    expect(outcomeForFailure(apiException('read ECONNRESET'), record({ secureConnected: true }))).toMatchObject({ kind: 'unknown' });
  });

  it('HttpClientException: 704 is in progress whatever the status; 4xx refusals are not_sent; 5xx unknown', () => {
    const http = (statusCode: number, errorCode: string) => Object.assign(new Error('HTTP Exception'), { name: 'HttpClientException', statusCode, errorCode, apiError: { status: statusCode } });
    expect(outcomeForFailure(http(409, '704'), record())).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect(outcomeForFailure(http(422, '704'), record())).toMatchObject({ kind: 'unknown', reason: 'in_progress' });
    expect(outcomeForFailure(http(422, '137'), record())).toMatchObject({ kind: 'not_sent', reason: 'validation' });
    expect(outcomeForFailure(http(401, '000'), record())).toMatchObject({ kind: 'not_sent', reason: 'authentication' });
    expect(outcomeForFailure(http(503, '905'), record())).toMatchObject({ kind: 'unknown', reason: 'server_error' });
  });

  it('maps every resultCode; unknown codes are never success or failure', () => {
    const asked = { amount: 1000, currency: 'EUR', reference: 'att_1' };
    for (const resultCode of ADYEN_RESULT_CODES) {
      const o = paymentOutcome({ pspReference: 'P', resultCode, merchantReference: 'att_1' }, asked, ADYEN_DEFAULT_DECLINES);
      expect(o.kind, resultCode).toBeTypeOf('string');
    }
    expect(paymentOutcome({ pspReference: 'P', resultCode: 'Refused', refusalReasonCode: '5' }, asked, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'declined', class: 'hard', code: 'blocked_card' });
    expect(paymentOutcome({ pspReference: 'P', resultCode: 'Brand New' }, asked, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'unknown' });
    expect(paymentOutcome({ pspReference: 'P', resultCode: 'Authorised', amount: { value: 2000, currency: 'EUR' } }, asked, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch' });
  });
});
