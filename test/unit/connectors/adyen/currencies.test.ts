// Adyen's exponents on every path an amount takes: the request body, the /payments and
// modification echoes, notifications and the settlement report, for the currencies whose
// Adyen decimals differ from ISO 4217 (CLP, ISK: 2 at Adyen; IDR, CVE: 0) and two that agree.

import { describe, expect, it } from 'vitest';
import { ADYEN_EXPONENTS, fromAdyenValue, toAdyenValue } from '../../../../src/connectors/adyen/currencies.ts';
import { ADYEN_DEFAULT_DECLINES } from '../../../../src/connectors/adyen/defaults.ts';
import { minorUnits } from '../../../../src/connectors/adyen/reconciliation.ts';
import { modificationOutcome, paymentOutcome } from '../../../../src/connectors/adyen/status-map.ts';
import { captureRequest, toAdyenAmount } from '../../../../src/connectors/adyen/transformers.ts';
import { normalizeItem } from '../../../../src/connectors/adyen/webhook.ts';

// [currency, gateway ISO minor units, Adyen value, the report's major-unit text]
const BOTH_WAYS: readonly [string, number, number, string][] = [
  ['CLP', 5000, 500000, '5000.00'], // 5000 pesos: ISO 0 decimals, Adyen 2
  ['ISK', 2790, 279000, '2790.00'], // 2790 krónur: ISO 0, Adyen 2 (the notes box)
  ['IDR', 1234500, 12345, '12345'], // 12,345.00 rupiah: ISO 2, Adyen 0
  ['CVE', 12300, 123, '123'], // 123 escudos: ISO 2, Adyen 0
  ['JPY', 500, 500, '500'], // agree at 0
  ['KWD', 12345, 12345, '12.345'], // agree at 3
];

describe("Adyen's currency exponents", () => {
  it.each(BOTH_WAYS)('%s %i ISO minor units go out as value %i and come back unchanged', (currency, iso, value) => {
    expect(toAdyenValue(iso, currency)).toEqual({ ok: true, value });
    expect(fromAdyenValue(value, currency)).toEqual({ ok: true, value: iso });
    expect(toAdyenAmount(iso, currency)).toEqual({ ok: true, value: { value, currency } });
  });

  it.each([
    ['IDR', 1234550, 'remainder of 50'],
    ['CVE', 12345, 'remainder of 45'],
  ])('refuses %s %i before sending, naming the amount (Adyen takes whole units)', (currency, iso, remainder) => {
    const r = toAdyenAmount(iso, currency);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.outcome).toMatchObject({ kind: 'not_sent', reason: 'local_validation' });
    expect(r.outcome.detail).toContain(`${iso} ${currency}`);
    expect(r.outcome.detail).toContain(remainder);
  });

  it.each([['CLP', 500050], ['ISK', 279001]])('refuses an Adyen %s value %i that is no whole ISO amount', (currency, value) => {
    expect(fromAdyenValue(value, currency).ok).toBe(false);
  });

  it('has the published rows (AED..EGP) and leaves out codes the table does not list', () => {
    expect(ADYEN_EXPONENTS).toMatchObject({ CLP: 2, CVE: 0, DJF: 0, BHD: 3, IDR: 0, ISK: 2, JPY: 0, KWD: 3, EUR: 2 });
    for (const missing of ['BIF', 'BGN', 'AFN', 'CLF', 'UYI']) {
      expect(ADYEN_EXPONENTS[missing]).toBeUndefined();
      expect(toAdyenValue(100, missing)).toMatchObject({ ok: false, problem: `Adyen's currency table has no row for ${missing}` });
    }
  });

  it('sends the converted value in capture bodies', () => {
    const amount = toAdyenAmount(1234500, 'IDR');
    if (!amount.ok) throw new Error('IDR 1234500 converts');
    const body = captureRequest({ paymentId: 'p', attemptId: 'att_1', captureId: 'c', providerRef: 'PSP', amount: 1234500, currency: 'IDR', final: true, idempotencyKey: 'k' }, amount.value, 'M');
    expect(body.amount).toEqual({ value: 12345, currency: 'IDR' });
  });
});

describe('Adyen echoes and notifications are read in Adyen decimals', () => {
  it.each(BOTH_WAYS)('/payments echo of %s: value %i back to %i ISO units', (currency, iso, value) => {
    const asked = { amount: iso, currency, reference: 'att_1' };
    expect(paymentOutcome({ pspReference: 'P', resultCode: 'Authorised', merchantReference: 'att_1', amount: { value, currency } }, asked, ADYEN_DEFAULT_DECLINES))
      .toMatchObject({ kind: 'succeeded', amount: iso, currency });
    expect(modificationOutcome({ pspReference: 'M', paymentPspReference: 'P', status: 'received', amount: { value, currency } }, { paymentRef: 'P', amount: iso, currency }))
      .toMatchObject({ kind: 'pending' });
  });

  it.each([['CLP', 5000], ['IDR', 1234500], ['CVE', 12300], ['ISK', 2790]])('an echo of the ISO units themselves (%s %i) is an integrity mismatch', (currency, iso) => {
    const asked = { amount: iso, currency, reference: 'att_1' };
    expect(paymentOutcome({ pspReference: 'P', resultCode: 'Authorised', amount: { value: iso, currency } }, asked, ADYEN_DEFAULT_DECLINES))
      .toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch' });
  });

  it.each(BOTH_WAYS)('a CAPTURE / REFUND notification in %s carries %i ISO units for value %i', (currency, iso, value) => {
    const base = { eventDate: '2026-11-03T10:00:00+01:00', merchantAccountCode: 'M', merchantReference: 'att_1', pspReference: 'MOD1', originalReference: 'PAY1', reason: '', success: 'true' as const, amount: { value, currency } };
    expect(normalizeItem({ ...base, eventCode: 'CAPTURE' }, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'capture_succeeded', amount: iso, currency });
    expect(normalizeItem({ ...base, eventCode: 'REFUND' }, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'refund_succeeded', amount: iso, currency });
    expect(normalizeItem({ ...base, eventCode: 'AUTHORISATION' }, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'authorization', outcome: { kind: 'succeeded', amount: iso } });
  });

  it('an AUTHORISATION whose value is no whole ISO amount is unknown; a CAPTURE of one is not applied', () => {
    const base = { eventDate: '2026-11-03T10:00:00+01:00', merchantAccountCode: 'M', merchantReference: 'att_1', pspReference: 'P', reason: '', success: 'true' as const, amount: { value: 500050, currency: 'CLP' } };
    expect(normalizeItem({ ...base, eventCode: 'AUTHORISATION' }, ADYEN_DEFAULT_DECLINES)).toMatchObject({ kind: 'authorization', outcome: { kind: 'unknown', reason: 'integrity_mismatch' } });
    expect(normalizeItem({ ...base, eventCode: 'CAPTURE' }, ADYEN_DEFAULT_DECLINES)).toEqual({ kind: 'ignored' });
  });

  it.each(BOTH_WAYS)('the settlement report text for %s reads back as %i ISO units', (currency, iso, _value, text) => {
    expect(minorUnits(text, currency)).toBe(iso);
  });

  it('refuses report text with a fraction ISO cannot hold, or more decimals than Adyen writes', () => {
    expect(minorUnits('5000.50', 'CLP')).toBeNull();
    expect(minorUnits('12345.5', 'IDR')).toBeNull();
    expect(minorUnits('12.3456', 'KWD')).toBeNull();
  });
});
