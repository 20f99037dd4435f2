// The resume's answer is bound to the attempt (issue 42 §5): a redirectResult is the browser's to
// send, so /payments/details may answer about some other payment. Another pspReference or
// merchantReference is a mismatch (unknown, alerted, never an approval); a final answer without
// them is pending (the AUTHORISATION notification decides); a known reference is never replaced.
// And what the shopper's return must carry (redirectResult), and all that is kept of it.
import { describe, expect, it } from 'vitest';
import { readAdyenReturn } from '../../../../src/connectors/adyen/customer-return.ts';
import { ADYEN_DEFAULT_DECLINES } from '../../../../src/connectors/adyen/defaults.ts';
import { resumeOutcome } from '../../../../src/connectors/adyen/status-map.ts';
import type { PaymentAnswer } from '../../../../src/connectors/adyen/status-map.ts';

const asked = { amount: 1000, currency: 'EUR', reference: 'att_1' };
const PSP = 'PSP0000000000001';
const authorised: PaymentAnswer = { pspReference: PSP, merchantReference: 'att_1', resultCode: 'Authorised', amount: { value: 1000, currency: 'EUR' } };
const refused: PaymentAnswer = { pspReference: PSP, merchantReference: 'att_1', resultCode: 'Refused', refusalReasonCode: '11', refusalReason: '3D Not Authenticated' };
const resume = (answer: PaymentAnswer, known: string | null = PSP) => resumeOutcome(answer, asked, known, ADYEN_DEFAULT_DECLINES);

describe('Adyen resume binding', () => {
  it('the attempt\'s own answer is its word', () => {
    expect(resume(authorised)).toMatchObject({ kind: 'succeeded', providerRef: PSP, amount: 1000 });
    expect(resume(refused)).toMatchObject({ kind: 'declined', providerRef: PSP });
  });

  it('another pspReference or merchantReference is a mismatch: unknown, alerted, the known reference kept', () => {
    for (const answer of [
      { ...authorised, pspReference: 'PSP0000000000002' },
      { ...authorised, merchantReference: 'att_2' },
      { ...refused, pspReference: 'PSP0000000000002' },
    ]) {
      expect(resume(answer), JSON.stringify(answer)).toMatchObject({ kind: 'unknown', reason: 'integrity_mismatch', alert: true, providerRef: PSP });
    }
  });

  it('a final answer without its references is no approval (nor decline) on its own: pending, the notification decides', () => {
    const { pspReference: _p, merchantReference: _m, ...bare } = authorised;
    expect(resume(bare)).toEqual({ kind: 'pending', providerRef: PSP, providerStatus: 'Authorised' });
    expect(resume({ ...authorised, merchantReference: undefined })).toMatchObject({ kind: 'pending', providerRef: PSP });
    expect(resume({ ...refused, pspReference: undefined })).toMatchObject({ kind: 'pending', providerRef: PSP });
    // No reference known either: nothing to wait on but the notification; never an approval.
    expect(resume(bare, null)).toMatchObject({ kind: 'unknown', reason: 'unparseable' });
  });

  it('an attempt named only by our reference takes the pspReference its own answer gives', () => {
    expect(resume(authorised, null)).toMatchObject({ kind: 'succeeded', providerRef: PSP });
  });
});

describe('the shopper\'s return (readAdyenReturn)', () => {
  it('needs a redirectResult, and keeps only that (never MD or PaRes)', () => {
    expect(readAdyenReturn({ redirectResult: 'X6XtfGC3!Y', MD: 'md', PaRes: 'pares', payload: 'p' })).toEqual({ ok: true, keep: { redirectResult: 'X6XtfGC3!Y' } });
    expect(readAdyenReturn({ MD: 'md', PaRes: 'pares' })).toMatchObject({ ok: false });
    expect(readAdyenReturn({})).toMatchObject({ ok: false });
  });
});
